#include "argus_authored.h"
int x;
