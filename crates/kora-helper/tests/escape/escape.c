/* One attempt to leave a helper's confinement per case (argv[1]); the test builds and runs it.
 * Prints "allowed" or "refused ERRNO" on stderr; exits 0 when allowed, 1 when refused. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include <arpa/inet.h>

struct how { unsigned long long flags, mode, resolve; };

static int verdict(long rc) {
    if (rc >= 0) { fprintf(stderr, "allowed\n"); return 0; }
    fprintf(stderr, "refused %d\n", errno);
    return 1;
}

int main(int argc, char **argv) {
    if (argc < 2) return 2;
    const char *c = argv[1];
    const char *arg = argc > 2 ? argv[2] : "";
    if (!strcmp(c, "tcp_socket")) return verdict(socket(AF_INET, SOCK_STREAM, 0));
    if (!strcmp(c, "udp6_socket")) return verdict(socket(AF_INET6, SOCK_DGRAM, 0));
    if (!strcmp(c, "unix_socket")) return verdict(socket(AF_UNIX, SOCK_STREAM, 0));
    if (!strcmp(c, "connect")) {
        int fd = socket(AF_INET, SOCK_STREAM, 0);
        if (fd < 0) return verdict(fd);
        struct sockaddr_in a; memset(&a, 0, sizeof a);
        a.sin_family = AF_INET; a.sin_port = htons((unsigned short)atoi(arg));
        a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        return verdict(connect(fd, (struct sockaddr *)&a, sizeof a));
    }
    if (!strcmp(c, "create")) return verdict(open(arg, O_WRONLY | O_CREAT, 0644));
    if (!strcmp(c, "open_rdwr")) return verdict(open(arg, O_RDWR));
    if (!strcmp(c, "read")) return verdict(open(arg, O_RDONLY));
    if (!strcmp(c, "openat2")) {
        struct how h = { O_WRONLY | O_CREAT, 0644, 0 };
        return verdict(syscall(SYS_openat2, AT_FDCWD, arg, &h, sizeof h));
    }
    if (!strcmp(c, "creat")) return verdict(creat(arg, 0644));
    if (!strcmp(c, "rename")) {
        char to[4096]; snprintf(to, sizeof to, "%s.moved", arg);
        return verdict(rename(arg, to));
    }
    if (!strcmp(c, "unlink")) return verdict(unlink(arg));
    if (!strcmp(c, "truncate")) return verdict(truncate(arg, 0));
    if (!strcmp(c, "fsize")) {
        /* stdout is a file the test opened for writing before the fork. */
        signal(SIGXFSZ, SIG_IGN);
        char buf[4096]; memset(buf, 'x', sizeof buf);
        return verdict(write(1, buf, sizeof buf));
    }
    if (!strcmp(c, "ptrace_parent")) return verdict(ptrace(PTRACE_ATTACH, getppid(), 0, 0));
    if (!strcmp(c, "ptrace_traceme")) return verdict(ptrace(PTRACE_TRACEME, 0, 0, 0));
    if (!strcmp(c, "io_uring")) {
        unsigned char params[120]; memset(params, 0, sizeof params);
        return verdict(syscall(SYS_io_uring_setup, 1, params));
    }
    if (!strcmp(c, "x32")) return verdict(syscall(SYS_getpid | 0x40000000));
    if (!strcmp(c, "fork_exec")) {
        /* The child is a new program that tries the socket again. */
        pid_t p = fork();
        if (p < 0) return verdict(p);
        if (p == 0) {
            execl("/proc/self/exe", argv[0], "tcp_socket", (char *)0);
            _exit(3);
        }
        int st = 0;
        waitpid(p, &st, 0);
        return WIFEXITED(st) ? WEXITSTATUS(st) : 4;
    }
    fprintf(stderr, "unknown case %s\n", c);
    return 2;
}
