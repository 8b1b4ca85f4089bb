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
	"math"
	"net"
	"net/http"
	"regexp"
	"strconv"
	"strings"
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
	// At most this many earlier thread messages and attachments in one task.
	maxThreadMessages = 1000
	maxAttachments    = 50
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

// threadMessage is one earlier message of the Slack thread; the current message is the task's text.
type threadMessage struct {
	Role   string // "user" or "assistant"
	Text   string
	UserID string // the Slack user id of a "user" message, if sent
	TS     string
}

// attachment is a file that came with the Slack message, with its bytes in Data (base64).
type attachment struct {
	Name     string
	Mimetype string
	Size     int64
	Data     string
}

// taskInput is what execute_task hands the model.
type taskInput struct {
	Text        string
	Messages    []threadMessage // oldest first
	Attachments []attachment
}

var sleepDirective = regexp.MustCompile(`#sleep=(\d+)`)

// runModel stands in for the real model call.
//
// in.Messages are the earlier messages of the Slack thread, oldest first; a real agent sends them
// as the model's earlier turns, then in.Text as the user's turn. in.Attachments are the message's
// files; a real agent decodes Data (base64.StdEncoding.DecodeString) and passes the bytes to the
// model as an image or a document. The echo only names them.
//
// "#sleep=<ms>" makes it slow on purpose, so the conformance kit can drive the accepted /
// get_task_result / cancel_task path; the context lets cancel_task stop the work.
func runModel(ctx context.Context, in taskInput) (string, error) {
	text := in.Text
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
	var notes []string
	if n := len(in.Messages); n > 0 {
		plural := "s"
		if n == 1 {
			plural = ""
		}
		notes = append(notes, fmt.Sprintf("thread: %d earlier message%s", n, plural))
	}
	if len(in.Attachments) > 0 {
		names := make([]string, len(in.Attachments))
		for i, file := range in.Attachments {
			names[i] = file.Name
		}
		notes = append(notes, "files: "+strings.Join(names, ", "))
	}
	if len(notes) > 0 {
		return "echo: " + text + " (" + strings.Join(notes, "; ") + ")", nil
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
	in, err := parseTaskInput(named)
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
		t = a.startTask(in)
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
func (a *agent) startTask(in taskInput) *task {
	ctx, cancel := context.WithCancel(context.Background())
	t := &task{id: "task-" + randomHex(16), status: "working", cancel: cancel, done: make(chan struct{}), createdAt: time.Now()}
	a.tasks[t.id] = t
	go func() {
		defer close(t.done)
		defer cancel()
		answer, err := runModel(ctx, in)
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

// parseTaskInput checks execute_task's params; -32602's data names every bad field, not just the first.
func parseTaskInput(params map[string]json.RawMessage) (taskInput, error) {
	var issues []fieldError
	text, ok := stringField(params, "text")
	if !ok || text == "" {
		issues = append(issues, fieldError{"text", "text is required and must be a non-empty string"})
	}
	in := taskInput{Text: text, Messages: parseMessages(params, &issues), Attachments: parseAttachments(params, &issues)}
	if len(issues) > 0 {
		return taskInput{}, newError(invalidParams, issues)
	}
	return in, nil
}

// parseMessages reads "messages": earlier messages of the Slack thread, oldest first.
func parseMessages(params map[string]json.RawMessage, issues *[]fieldError) []threadMessage {
	items, present, ok := arrayField(params, "messages")
	if !present {
		return nil
	}
	if !ok || len(items) > maxThreadMessages {
		*issues = append(*issues, fieldError{"messages", fmt.Sprintf("messages must be an array of at most %d entries", maxThreadMessages)})
		return nil
	}
	out := make([]threadMessage, 0, len(items))
	for i, item := range items {
		path := "messages." + strconv.Itoa(i)
		fields, ok := objectFields(item)
		if !ok {
			*issues = append(*issues, fieldError{path, "each message must be an object"})
			continue
		}
		var m threadMessage
		if m.Role, ok = stringField(fields, "role"); !ok || (m.Role != "user" && m.Role != "assistant") {
			*issues = append(*issues, fieldError{path + ".role", `role must be "user" or "assistant"`})
		}
		if m.Text, ok = stringField(fields, "text"); !ok {
			*issues = append(*issues, fieldError{path + ".text", "text must be a string"})
		}
		if _, sent := fields["user_id"]; sent {
			if m.UserID, ok = stringField(fields, "user_id"); !ok {
				*issues = append(*issues, fieldError{path + ".user_id", "user_id must be a string"})
			}
		}
		if m.TS, ok = stringField(fields, "ts"); !ok || m.TS == "" {
			*issues = append(*issues, fieldError{path + ".ts", "ts must be a non-empty string"})
		}
		out = append(out, m)
	}
	return out
}

// base64Pattern is the standard alphabet, padded; the length is checked to be a multiple of 4 separately.
var base64Pattern = regexp.MustCompile(`^[A-Za-z0-9+/]*={0,2}$`)

// parseAttachments reads "attachments": the message's files, each with its bytes in data (base64).
func parseAttachments(params map[string]json.RawMessage, issues *[]fieldError) []attachment {
	items, present, ok := arrayField(params, "attachments")
	if !present {
		return nil
	}
	if !ok || len(items) > maxAttachments {
		*issues = append(*issues, fieldError{"attachments", fmt.Sprintf("attachments must be an array of at most %d entries", maxAttachments)})
		return nil
	}
	out := make([]attachment, 0, len(items))
	for i, item := range items {
		path := "attachments." + strconv.Itoa(i)
		fields, ok := objectFields(item)
		if !ok {
			*issues = append(*issues, fieldError{path, "each attachment must be an object"})
			continue
		}
		var file attachment
		if file.Name, ok = stringField(fields, "name"); !ok || file.Name == "" {
			*issues = append(*issues, fieldError{path + ".name", "name is required and must be a non-empty string"})
		}
		if file.Mimetype, ok = stringField(fields, "mimetype"); !ok || file.Mimetype == "" {
			*issues = append(*issues, fieldError{path + ".mimetype", "mimetype is required and must be a non-empty string"})
		}
		// A JSON number, read as JavaScript would: 3.0 is the whole number 3.
		var size float64
		sizeOK := isNumber(fields["size"]) && json.Unmarshal(fields["size"], &size) == nil && size >= 0 && size == math.Trunc(size)
		if !sizeOK {
			*issues = append(*issues, fieldError{path + ".size", "size is required and must be a whole number ≥ 0"})
		}
		var dataOK bool
		file.Data, dataOK = stringField(fields, "data")
		if dataOK = dataOK && len(file.Data)%4 == 0 && base64Pattern.MatchString(file.Data); !dataOK {
			*issues = append(*issues, fieldError{path + ".data", "data must be base64 (standard alphabet, padded)"})
		}
		if sizeOK && dataOK {
			if length := base64Length(file.Data); float64(length) != size {
				*issues = append(*issues, fieldError{path + ".size", "size must be the byte length of data"})
			} else {
				file.Size = length
			}
		}
		out = append(out, file)
	}
	return out
}

// base64Length is the byte length a base64 string decodes to (standard alphabet, padded).
func base64Length(data string) int64 {
	padding := int64(len(data) - len(strings.TrimRight(data, "=")))
	return int64(len(data))/4*3 - padding
}

// stringField reads a string member; ok is false when it is missing or not a string.
func stringField(fields map[string]json.RawMessage, name string) (string, bool) {
	var value string
	raw, present := fields[name]
	if !present || firstByte(raw) != '"' || json.Unmarshal(raw, &value) != nil {
		return "", false
	}
	return value, true
}

// arrayField reads an optional array member: present is false when it is missing, ok false
// when it is there but not an array.
func arrayField(fields map[string]json.RawMessage, name string) (items []json.RawMessage, present, ok bool) {
	raw, present := fields[name]
	if !present {
		return nil, false, true
	}
	if firstByte(raw) != '[' || json.Unmarshal(raw, &items) != nil {
		return nil, true, false
	}
	return items, true, true
}

func objectFields(raw json.RawMessage) (map[string]json.RawMessage, bool) {
	var fields map[string]json.RawMessage
	if firstByte(raw) != '{' || json.Unmarshal(raw, &fields) != nil {
		return nil, false
	}
	return fields, true
}

func isNumber(raw json.RawMessage) bool {
	b := firstByte(raw)
	return b == '-' || (b >= '0' && b <= '9')
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
