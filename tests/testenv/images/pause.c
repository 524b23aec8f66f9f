// The sandbox ("pause") process of the real test nodes' pods: containerd
// starts it first in every pod to hold the pod's namespaces. It sleeps until
// SIGINT or SIGTERM and, being PID 1 when the pod shares its process
// namespace, reaps the orphans handed to it. Built static (gcc -static) into
// an image of its own by scripts/testenv-images; nothing else is in the image.
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv) {
  if (argc > 1 && argv[1][0] == '-' && argv[1][1] == 'v') {
    puts("ballast-pause 1.0");
    return 0;
  }
  sigset_t wanted;
  sigemptyset(&wanted);
  sigaddset(&wanted, SIGINT);
  sigaddset(&wanted, SIGTERM);
  sigaddset(&wanted, SIGCHLD);
  // Blocked, then taken one at a time: no handler runs asynchronously.
  if (sigprocmask(SIG_BLOCK, &wanted, NULL) != 0) {
    perror("ballast-pause: sigprocmask");
    return 1;
  }
  for (;;) {
    int sig = 0;
    if (sigwait(&wanted, &sig) != 0) continue;
    if (sig == SIGCHLD) {
      while (waitpid(-1, NULL, WNOHANG) > 0) {
      }
      continue;
    }
    return 0;  // SIGINT or SIGTERM: the pod is being stopped.
  }
}
