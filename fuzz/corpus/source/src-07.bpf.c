/* #include "x" */
int b;
