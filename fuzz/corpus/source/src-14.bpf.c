_Pragma("GCC dependency \"/etc/passwd\"")
