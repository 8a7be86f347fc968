#if __has_include(</etc/passwd>)
#endif
