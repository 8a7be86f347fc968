int a; // #include </etc/passwd>
