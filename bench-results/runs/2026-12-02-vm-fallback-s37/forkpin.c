// fork cost with DMA-pinned private memory (io_uring registered buffers pin with FOLL_PIN,
// as the GPU driver's cuMemHostRegister does), with and without MADV_DONTFORK
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <linux/io_uring.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
int main(int argc,char**argv){
  size_t gb=atoi(argv[1]); int pin=atoi(argv[2]); int dontfork=atoi(argv[3]);
  size_t len=gb<<30; char*p=mmap(0,len,PROT_READ|PROT_WRITE,MAP_PRIVATE|MAP_ANONYMOUS,-1,0);
  memset(p,1,len);
  if(dontfork) madvise(p,len,MADV_DONTFORK);
  if(pin){ struct io_uring_params par; memset(&par,0,sizeof par);
    int fd=syscall(__NR_io_uring_setup,4,&par); if(fd<0){perror("setup");return 1;}
    int n=gb; struct iovec*v=calloc(n,sizeof *v); for(int i=0;i<n;i++){v[i].iov_base=p+((size_t)i<<30);v[i].iov_len=1<<30;}
    if(syscall(__NR_io_uring_register,fd,IORING_REGISTER_BUFFERS,v,n)<0){perror("register");return 1;} }
  double tot=0; for(int k=0;k<5;k++){double t=now(); pid_t c=fork(); if(c==0) _exit(0); tot+=now()-t; waitpid(c,0,0);}
  printf("%zu GB pinned=%d dontfork=%d: fork %.1f ms each\n",gb,pin,dontfork,tot/5*1e3);
}
