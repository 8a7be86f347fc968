#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <stdint.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e6+t.tv_nsec/1e3;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
int main(int argc,char**argv){int n=argc>1?atoi(argv[1]):200;long k=argc>2?atol(argv[2]):20000;
 double *v=malloc(n*sizeof*v);volatile uint64_t sink;
 for(int i=0;i<n;i++){uint64_t x=i+1;double t0=now();for(long j=0;j<k;j++){x=x*6364136223846793005ULL+1442695040888963407ULL;x^=x>>17;}sink=x;v[i]=now()-t0;}
 qsort(v,n,sizeof*v,cmp);printf("%.2f %.2f %.2f\n",v[0],v[n/10],v[n/2]);return 0;}
