#define F </etc/passwd>
#include F
