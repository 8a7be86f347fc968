%:include </etc/passwd>
