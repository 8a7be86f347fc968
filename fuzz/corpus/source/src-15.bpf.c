#define P(a, b) a##b
