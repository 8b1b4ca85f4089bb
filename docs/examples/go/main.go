// Command agent is a minimal execution agent for the zone contract, on net/http and
// encoding/json alone.
//
// It answers JSON-RPC 2.0 execute_task, get_task_result and cancel_task on POST /invocations
// (the AgentCore Runtime HTTP contract; GET /ping answers too), so the same binary runs behind
// the https transport or on AgentCore. The "model" is an echo: replace runModel with yours.
//
//	go run . --port 8080
//	npx zone conformance http://127.0.0.1:8080/invocations
package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"sync"
	"time"
	"unicode/utf8"
)

const (
	parseError     = -32700
	invalidRequest = -32600
	methodNotFound = -32601
	invalidParams  = -32602
	internalError  = -32603
	taskNotFound   = -32002
	taskCancelled  = -32003
)

var messages = map[int]string{
	parseError:     "Parse error",
	invalidRequest: "Invalid Request",
	methodNotFound: "Method not found",
	invalidParams:  "Invalid params",
	internalError:  "Internal error",
	taskNotFound:   "Task not found",
	taskCancelled:  "Task cancelled",
}

const (
	maxBodyBytes = 1 << 20
	// Finished tasks are kept this long for get_task_result; then they are "not found".
	taskTTL = time.Hour
)

// rpcError is a failure that goes on the wire as a JSON-RPC error object.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data,omitempty"`
}

func (e *rpcError) Error() string { return e.Message }

func newError(code int, data any) *rpcError {
	return &rpcError{Code: code, Message: messages[code], Data: data}
}

type fieldError struct {
	Path    string `json:"path"`
	Message string `json:"message"`
}

func invalidField(path, message string) *rpcError {
	return newError(invalidParams, []fieldError{{Path: path, Message: message}})
}

var sleepDirective = regexp.MustCompile(`#sleep=(\d+)`)

// runModel stands in for the real model call. "#sleep=<ms>" makes it slow on purpose, so the
// conformance kit can drive the accepted / get_task_result / cancel_task path; the context lets
// cancel_task stop the work.
func runModel(ctx context.Context, text string) (string, error) {
	if match := sleepDirective.FindStringSubmatch(text); match != nil {
		if ms, err := strconv.Atoi(match[1]); err == nil {
			timer := time.NewTimer(time.Duration(ms) * time.Millisecond)
			defer timer.Stop()
			select {
			case <-timer.C:
			case <-ctx.Done():
				return "", ctx.Err()
			}
		}
	}
	return "echo: " + text, nil
}

type task struct {
	id        string
	status    string // working → success | failed | cancelled
	result    map[string]any
	err       *rpcError
	cancel    context.CancelFunc
	done      chan struct{}
	createdAt time.Time
}

type agent struct {
	syncBudget time.Duration
	startedAt  int64

	mu    sync.Mutex
	tasks map[string]*task
	// The verification zone reuses a request id when it retries a task: same id, same task.
	taskOfRequest map[string]*task
}

func newAgent(syncBudget time.Duration) *agent {
	return &agent{
		syncBudget:    syncBudget,
		startedAt:     time.Now().Unix(),
		tasks:         map[string]*task{},
		taskOfRequest: map[string]*task{},
	}
}

type handlerFunc func(params, id json.RawMessage) (any, error)

func (a *agent) methods() map[string]handlerFunc {
	return map[string]handlerFunc{
		"execute_task":    a.executeTask,
		"get_task_result": a.getTaskResult,
		"cancel_task":     a.cancelTask,
	}
}

// --- methods ---------------------------------------------------------------------------------

func (a *agent) executeTask(params, id json.RawMessage) (any, error) {
	named, err := namedParams(params)
	if err != nil {
		return nil, err
	}
	text, err := requiredString(named, "text")
	if err != nil {
		return nil, err
	}
	key := ""
	if trimmed := bytes.TrimSpace(id); len(trimmed) > 0 && string(trimmed) != "null" {
		key = string(trimmed) // the raw JSON, so the id 7 and the id "7" stay apart
	}

	a.mu.Lock()
	a.forgetOldTasks()
	t, repeated := a.taskOfRequest[key]
	repeated = repeated && key != ""
	if !repeated {
		t = a.startTask(text)
		if key != "" {
			a.taskOfRequest[key] = t
		}
	}
	a.mu.Unlock()

	if !repeated {
		// Answer with the result if it comes within the budget; else the task runs on.
		timer := time.NewTimer(a.syncBudget)
		select {
		case <-t.done:
		case <-timer.C:
		}
		timer.Stop()
	}

	a.mu.Lock()
	defer a.mu.Unlock()
	if t.status == "working" {
		return map[string]any{"status": "accepted", "task_id": t.id}, nil
	}
	return finalAnswer(t)
}

func (a *agent) getTaskResult(params, _ json.RawMessage) (any, error) {
	t, err := a.findTask(params)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.status == "working" {
		return map[string]any{"status": "working", "task_id": t.id}, nil
	}
	return finalAnswer(t)
}

func (a *agent) cancelTask(params, _ json.RawMessage) (any, error) {
	t, err := a.findTask(params)
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if t.status == "working" {
		t.status = "cancelled"
		t.cancel()
	}
	if t.status == "cancelled" {
		return map[string]any{"status": "cancelled", "task_id": t.id}, nil
	}
	// Already finished: answer with its final state.
	return finalAnswer(t)
}

// --- tasks -----------------------------------------------------------------------------------

// startTask runs the model in the background; the caller holds a.mu.
func (a *agent) startTask(text string) *task {
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{id: "task-" + randomHex(16), status: "working", cancel: cancel, done: make(chan struct{}), createdAt: time.Now()}
	a.tasks[t.id] = t
	go func() {
		defer close(t.done)
		defer cancel()
		answer, err := runModel(ctx, text)
		a.mu.Lock()
		defer a.mu.Unlock()
		if t.status != "working" {
			return // cancelled meanwhile
		}
		if err != nil {
			t.status = "failed"
			var domain *rpcError
			if errors.As(err, &domain) {
				// A domain error of the model (e.g. -32010 throttled) goes to the caller as it is.
				t.err = domain
				return
			}
			// The cause stays in our log; the caller gets a generic -32603, never a stack trace.
			log.Printf("task %s failed: %v", t.id, err)
			t.err = newError(internalError, nil)
			return
		}
		t.status = "success"
		t.result = map[string]any{"status": "success", "response_text": answer}
	}()
	return t
}

// finalAnswer is the answer for a task that is no longer working; the caller holds a.mu.
func finalAnswer(t *task) (any, error) {
	switch t.status {
	case "success":
		return t.result, nil
	case "cancelled":
		return nil, newError(taskCancelled, nil)
	case "failed":
		return nil, t.err
	default:
		return nil, newError(internalError, nil)
	}
}

func (a *agent) findTask(params json.RawMessage) (*task, error) {
	named, err := namedParams(params)
	if err != nil {
		return nil, err
	}
	taskID, err := requiredString(named, "task_id")
	if err != nil {
		return nil, err
	}
	a.mu.Lock()
	t := a.tasks[taskID]
	a.mu.Unlock()
	if t == nil {
		return nil, newError(taskNotFound, nil)
	}
	return t, nil
}

// forgetOldTasks bounds memory; the caller holds a.mu.
func (a *agent) forgetOldTasks() {
	cutoff := time.Now().Add(-taskTTL)
	for id, t := range a.tasks {
		if t.status != "working" && t.createdAt.Before(cutoff) {
			delete(a.tasks, id)
		}
	}
	for key, t := range a.taskOfRequest {
		if _, ok := a.tasks[t.id]; !ok {
			delete(a.taskOfRequest, key)
		}
	}
}

// --- JSON-RPC --------------------------------------------------------------------------------

// handleBody takes a request body and returns the response body, or nil for "no response".
func (a *agent) handleBody(body []byte) []byte {
	// encoding/json quietly replaces invalid UTF-8; JSON text must be UTF-8, so check first.
	if !utf8.Valid(body) || !json.Valid(body) {
		return marshal(failure(nil, newError(parseError, nil)))
	}
	trimmed := bytes.TrimSpace(body)
	if firstByte(trimmed) != '[' {
		response := a.handleOne(trimmed)
		if response == nil {
			return nil
		}
		return marshal(response)
	}
	var members []json.RawMessage
	if err := json.Unmarshal(trimmed, &members); err != nil {
		return marshal(failure(nil, newError(parseError, nil)))
	}
	if len(members) == 0 {
		return marshal(failure(nil, newError(invalidRequest, nil)))
	}
	responses := make([]map[string]any, len(members))
	var wg sync.WaitGroup
	for i, member := range members {
		wg.Add(1)
		go func(i int, member json.RawMessage) {
			defer wg.Done()
			responses[i] = a.handleOne(member)
		}(i, member)
	}
	wg.Wait()
	answered := make([]map[string]any, 0, len(responses))
	for _, response := range responses {
		if response != nil {
			answered = append(answered, response)
		}
	}
	if len(answered) == 0 {
		return nil
	}
	return marshal(answered)
}

// handleOne answers one request; nil means "no response" (a notification).
func (a *agent) handleOne(raw json.RawMessage) map[string]any {
	var fields map[string]json.RawMessage
	if err := json.Unmarshal(raw, &fields); err != nil || fields == nil {
		return failure(nil, newError(invalidRequest, nil))
	}
	idRaw, hasID := fields["id"]
	id := json.RawMessage(bytes.TrimSpace(idRaw))
	var version, method string
	validVersion := firstByte(fields["jsonrpc"]) == '"' && json.Unmarshal(fields["jsonrpc"], &version) == nil && version == "2.0"
	validMethod := firstByte(fields["method"]) == '"' && json.Unmarshal(fields["method"], &method) == nil
	params, hasParams := fields["params"]
	validParams := !hasParams || firstByte(params) == '{' || firstByte(params) == '['
	if !validVersion || !validMethod || !validParams || (hasID && !isValidID(id)) {
		return failure(nil, newError(invalidRequest, nil))
	}

	handler, known := a.methods()[method]
	if !known {
		if !hasID {
			return nil
		}
		return failure(id, newError(methodNotFound, nil))
	}
	if !hasID {
		// Nobody waits for a notification's answer, so do not hold the response for the budget.
		go a.call(handler, params, nil)
		return nil
	}
	return a.call(handler, params, id)
}

func (a *agent) call(handler handlerFunc, params, id json.RawMessage) map[string]any {
	result, err := handler(params, id)
	if err != nil {
		var rpcErr *rpcError
		if errors.As(err, &rpcErr) {
			return failure(id, rpcErr)
		}
		log.Printf("unexpected error: %v", err)
		return failure(id, newError(internalError, nil))
	}
	return map[string]any{"jsonrpc": "2.0", "result": result, "id": id}
}

// failure builds an error response; a nil id is written as null.
func failure(id json.RawMessage, err *rpcError) map[string]any {
	return map[string]any{"jsonrpc": "2.0", "error": err, "id": id}
}

func namedParams(params json.RawMessage) (map[string]json.RawMessage, error) {
	if len(params) == 0 {
		return map[string]json.RawMessage{}, nil
	}
	var named map[string]json.RawMessage
	if firstByte(params) != '{' || json.Unmarshal(params, &named) != nil {
		return nil, invalidField("(params)", "params must be an object (by name), not an array")
	}
	return named, nil
}

func requiredString(params map[string]json.RawMessage, field string) (string, error) {
	var value string
	raw, ok := params[field]
	if !ok || firstByte(raw) != '"' || json.Unmarshal(raw, &value) != nil || value == "" {
		return "", invalidField(field, field+" is required and must be a non-empty string")
	}
	return value, nil
}

// isValidID accepts what JSON-RPC allows as an id: a string, a number or null.
func isValidID(id json.RawMessage) bool {
	switch b := firstByte(id); {
	case b == '"', b == '-', b >= '0' && b <= '9':
		return true
	default:
		return string(id) == "null"
	}
}

func firstByte(raw []byte) byte {
	trimmed := bytes.TrimSpace(raw)
	if len(trimmed) == 0 {
		return 0
	}
	return trimmed[0]
}

func marshal(value any) []byte {
	out, err := json.Marshal(value)
	if err != nil {
		// Only a result that cannot be encoded gets here; the caller still gets JSON-RPC.
		log.Printf("cannot encode a response: %v", err)
		return []byte(`{"jsonrpc":"2.0","error":{"code":-32603,"message":"Internal error"},"id":null}`)
	}
	return out
}

func randomHex(size int) string {
	buf := make([]byte, size)
	if _, err := rand.Read(buf); err != nil {
		panic(err)
	}
	return hex.EncodeToString(buf)
}

// --- HTTP ------------------------------------------------------------------------------------

func (a *agent) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	switch r.URL.Path {
	case "/ping":
		if r.Method != http.MethodGet {
			w.Header().Set("Allow", http.MethodGet)
			writeJSON(w, http.StatusMethodNotAllowed, []byte(`{"error":"Method Not Allowed"}`))
			return
		}
		writeJSON(w, http.StatusOK, []byte(fmt.Sprintf(`{"status":"Healthy","time_of_last_update":%d}`, a.startedAt)))
	case "/invocations":
		if r.Method != http.MethodPost {
			w.Header().Set("Allow", http.MethodPost)
			writeJSON(w, http.StatusMethodNotAllowed, []byte(`{"error":"Method Not Allowed"}`))
			return
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBodyBytes))
		if err != nil {
			var tooLarge *http.MaxBytesError
			if errors.As(err, &tooLarge) {
				writeJSON(w, http.StatusRequestEntityTooLarge, []byte(`{"error":"Payload Too Large"}`))
				return
			}
			writeJSON(w, http.StatusBadRequest, []byte(`{"error":"Bad Request"}`))
			return
		}
		answer := a.handleBody(body)
		if answer == nil {
			w.WriteHeader(http.StatusNoContent)
			return
		}
		// Every JSON-RPC answer, errors included, is HTTP 200: behind AgentCore a non-2xx status
		// becomes the caller's RuntimeClientError and the JSON-RPC error would be lost.
		writeJSON(w, http.StatusOK, answer)
	default:
		writeJSON(w, http.StatusNotFound, []byte(`{"error":"Not Found"}`))
	}
}

func writeJSON(w http.ResponseWriter, status int, body []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	_, _ = w.Write(body)
}

func main() {
	host := flag.String("host", "127.0.0.1", "address to listen on (0.0.0.0 on AgentCore)")
	port := flag.Int("port", 8080, "port to listen on (0 picks a free one)")
	syncBudgetMs := flag.Int("sync-budget-ms", 2000, "answer accepted when a task runs longer than this")
	flag.Parse()

	listener, err := net.Listen("tcp", net.JoinHostPort(*host, strconv.Itoa(*port)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("execution agent listening on http://%s/invocations\n", listener.Addr())
	server := &http.Server{Handler: newAgent(time.Duration(*syncBudgetMs) * time.Millisecond), ReadHeaderTimeout: 10 * time.Second}
	log.Fatal(server.Serve(listener))
}
