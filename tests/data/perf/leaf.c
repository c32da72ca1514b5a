#include <stdio.h>
#include <stdlib.h>
static volatile long sink;
__attribute__((noinline)) long leaf(long n){ long s=0;
  for(volatile long i=0;i<n;i++) s+=i*i%7; return s; }
__attribute__((noinline)) long rec(int d,long n){ if(!d) return leaf(n); return rec(d-1,n)+sink; }
static inline long inl(long n){ return leaf(n)*2; }
__attribute__((noinline)) long viainl(long n){ return inl(n)+sink; }
int main(int argc,char**argv){ int K=argc>1?atoi(argv[1]):300;
  for(int k=0;k<K;k++){ sink+=rec(5,200000); sink+=viainl(300000); void *p=malloc(1<<20);
    sink+=(long)p; free(p);} return 0; }
