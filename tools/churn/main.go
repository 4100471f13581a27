// Command churn produces pod events at a target rate against a real API server: it merge-patches the
// label kubeview.io/bench-churn on the named pods round-robin, call i due at start + i/rate, from
// many goroutines over one HTTP/2 connection pool. `kubeview bench cluster` runs it so the events it
// offers are not made by Python threads on the cores the measured TUI needs (issue #41 item 4).
//
// It stops at --duration, when stdin closes (--stdin), or on SIGTERM/SIGINT, and prints one JSON line:
// {"done":N,"errors":N,"seconds":S,"achieved":R,"target":T,"workers":W,"first_error":"..."}.
// Pod i's label value is RUN-i, i the index of the call that wrote it (so a reader can check the writes)
// and RUN this run's --run, by default a new one each run: a run over pods an earlier run patched
// writes values they do not hold yet, so every patch is a change and an event (the same values again
// were no-op patches: no event at all, and a TUI measured "under churn" saw none).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

const label = "kubeview.io/bench-churn"

type result struct {
	Done       int64   `json:"done"`
	Errors     int64   `json:"errors"`
	Seconds    float64 `json:"seconds"`
	Achieved   float64 `json:"achieved"`
	Target     float64 `json:"target"`
	Workers    int     `json:"workers"`
	FirstError string  `json:"first_error,omitempty"`
}

func main() {
	kubeconfig := flag.String("kubeconfig", "", "kubeconfig file (required)")
	namespace := flag.String("namespace", "", "namespace of the pods (required)")
	namesFile := flag.String("names", "", "file with one pod name per line (else --selector)")
	selector := flag.String("selector", "", "label selector listing the pods when --names is not given")
	rate := flag.Float64("rate", 1000, "events per second offered")
	duration := flag.Duration("duration", 0, "stop after this long (0: at SIGTERM, or when stdin closes with --stdin)")
	stdin := flag.Bool("stdin", false, "stop when stdin closes")
	workers := flag.Int("workers", 64, "goroutines issuing patches")
	protobuf := flag.Bool("protobuf", true, "ask for the patched pod back as protobuf, not JSON (less API server CPU)")
	run := flag.String("run", strconv.FormatInt(time.Now().UnixNano(), 36), "prefix of every label value written (default: new each run)")
	flag.Parse()
	if *kubeconfig == "" || *namespace == "" || *rate <= 0 || *workers < 1 {
		fail("needs --kubeconfig, --namespace, --rate > 0 and --workers >= 1")
	}
	config, err := clientcmd.BuildConfigFromFlags("", *kubeconfig)
	if err != nil {
		fail("kubeconfig: %v", err)
	}
	// Client-side rate limiting never caps the churn: QPS and burst well above the target.
	config.QPS, config.Burst = float32(*rate*4+1000), int(*rate*4+1000)
	config.UserAgent = "kubeview-churn"
	if *protobuf {
		config.AcceptContentTypes = "application/vnd.kubernetes.protobuf,application/json"
		config.ContentType = "application/vnd.kubernetes.protobuf"
	}
	clientset, err := kubernetes.NewForConfig(config)
	if err != nil {
		fail("client: %v", err)
	}
	names, err := podNames(clientset, *namespace, *namesFile, *selector)
	if err != nil {
		fail("%v", err)
	}
	if len(names) == 0 {
		fail("no pods to patch in namespace %s", *namespace)
	}
	ctx, cancel := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer cancel()
	if *duration > 0 {
		ctx, cancel = context.WithTimeout(ctx, *duration)
		defer cancel()
	}
	if *stdin {
		go func() { _, _ = io.Copy(io.Discard, os.Stdin); cancel() }()
	}
	res := churn(ctx, clientset, *namespace, names, *rate, *workers, *run)
	line, _ := json.Marshal(res)
	fmt.Println(string(line))
}

// churn runs the workers until ctx ends; call i (a shared counter) is due at start + i/rate, and a
// worker behind schedule calls at once, so the achieved rate is what the server and client allow.
func churn(ctx context.Context, cs *kubernetes.Clientset, ns string, names []string, rate float64, workers int, run string) result {
	pods := cs.CoreV1().Pods(ns)
	var next, done, errs atomic.Int64
	var firstErr sync.Once
	res := result{Target: rate, Workers: workers}
	start := time.Now()
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				due := start.Add(time.Duration(float64(i) / rate * float64(time.Second)))
				if wait := time.Until(due); wait > 0 {
					select {
					case <-ctx.Done():
						return
					case <-time.After(wait):
					}
				}
				if ctx.Err() != nil {
					return
				}
				patch := fmt.Sprintf(`{"metadata":{"labels":{%q:"%s-%d"}}}`, label, run, i)
				// A patch already sent finishes even when ctx ends, so `done` counts every write made.
				call, stop := context.WithTimeout(context.Background(), 30*time.Second)
				_, err := pods.Patch(call, names[i%int64(len(names))], types.MergePatchType, []byte(patch), metav1.PatchOptions{})
				stop()
				if err != nil {
					errs.Add(1)
					firstErr.Do(func() { res.FirstError = err.Error() })
				} else {
					done.Add(1)
				}
			}
		}()
	}
	wg.Wait()
	res.Seconds = time.Since(start).Seconds()
	res.Done, res.Errors = done.Load(), errs.Load()
	res.Achieved = float64(res.Done) / res.Seconds
	return res
}

func podNames(cs *kubernetes.Clientset, ns, file, selector string) ([]string, error) {
	if file != "" {
		f, err := os.Open(file)
		if err != nil {
			return nil, err
		}
		defer f.Close()
		var names []string
		scan := bufio.NewScanner(f)
		for scan.Scan() {
			if name := strings.TrimSpace(scan.Text()); name != "" {
				names = append(names, name)
			}
		}
		return names, scan.Err()
	}
	list, err := cs.CoreV1().Pods(ns).List(context.Background(), metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return nil, fmt.Errorf("listing pods: %w", err)
	}
	names := make([]string, 0, len(list.Items))
	for _, p := range list.Items {
		names = append(names, p.Name)
	}
	return names, nil
}

func fail(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "churn: "+format+"\n", args...)
	os.Exit(2)
}
