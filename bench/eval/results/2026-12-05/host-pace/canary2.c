#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <stdint.h>
static double now(void){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec*1e9+t.tv_nsec;}
static int cmp(const void*a,const void*b){double x=*(double*)a,y=*(double*)b;return x<y?-1:x>y;}
/* ns per dependent load over a random cycle of MiB mebibytes; min and median of n trials of steps loads */
int main(int argc,char**argv){size_t mib=atol(argv[1]);int n=atoi(argv[2]);long steps=atol(argv[3]);
 size_t cnt=mib*1048576/64; size_t *a=aligned_alloc(64,cnt*64); size_t *perm=malloc(cnt*sizeof*perm);
 for(size_t i=0;i<cnt;i++)perm[i]=i; srand(1);
 for(size_t i=cnt-1;i>0;i--){size_t j=((size_t)rand()*RAND_MAX+rand())%(i+1);size_t t=perm[i];perm[i]=perm[j];perm[j]=t;}
 double t0=now();
 for(size_t i=0;i<cnt;i++)a[perm[i]*8]=perm[(i+1)%cnt]*8;
 double fill=now()-t0;
 double *v=malloc(n*sizeof*v); size_t p=0;
 for(int k=0;k<n;k++){double s=now();for(long j=0;j<steps;j++)p=a[p];v[k]=(now()-s)/steps;}
 qsort(v,n,sizeof*v,cmp); printf("%.2f %.2f %.1f %zu\n",v[0],v[n/2],fill/cnt,p&1);return 0;}
