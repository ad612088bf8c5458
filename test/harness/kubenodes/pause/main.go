// Command pause is the sandbox ("pause") container of the test nodes' pods: it holds the pod's namespaces until
// it is told to stop, and reaps the zombies of a shared PID namespace. With -http ADDR it also answers every HTTP
// request with its hostname, so a test can reach a pod over the pod network.
package main

import (
	"flag"
	"fmt"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	addr := flag.String("http", "", "also serve HTTP on this address (answers with the hostname)")
	flag.Parse()
	stop := make(chan os.Signal, 1)
	signal.Notify(stop, syscall.SIGINT, syscall.SIGTERM)
	children := make(chan os.Signal, 1)
	signal.Notify(children, syscall.SIGCHLD)
	if *addr != "" {
		host, _ := os.Hostname()
		srv := &http.Server{Addr: *addr, ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
			fmt.Fprintln(w, host)
		})}
		go func() {
			if err := srv.ListenAndServe(); err != nil {
				fmt.Fprintln(os.Stderr, "pause:", err)
				os.Exit(1)
			}
		}()
	}
	for {
		select {
		case <-stop:
			return
		case <-children:
			for {
				var ws syscall.WaitStatus
				pid, err := syscall.Wait4(-1, &ws, syscall.WNOHANG, nil)
				if pid <= 0 || err != nil {
					break
				}
			}
		}
	}
}
