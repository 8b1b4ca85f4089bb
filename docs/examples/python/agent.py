#!/usr/bin/env python3
"""A minimal execution agent for the zone contract, on the Python standard library alone.

It answers JSON-RPC 2.0 `execute_task`, `get_task_result` and `cancel_task` on
POST /invocations (the AgentCore Runtime HTTP contract; GET /ping answers too), so the same
file runs behind the `https` transport or on AgentCore. The "model" is an echo: replace
`run_model` with a call to yours.

    python3 agent.py --port 8080
    npx zone conformance http://127.0.0.1:8080/invocations
"""

import argparse
import json
import re
import sys
import threading
import time
import uuid
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
METHOD_NOT_FOUND = -32601
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603
TASK_NOT_FOUND = -32002
TASK_CANCELLED = -32003

MESSAGES = {
    PARSE_ERROR: "Parse error",
    INVALID_REQUEST: "Invalid Request",
    METHOD_NOT_FOUND: "Method not found",
    INVALID_PARAMS: "Invalid params",
    INTERNAL_ERROR: "Internal error",
    TASK_NOT_FOUND: "Task not found",
    TASK_CANCELLED: "Task cancelled",
}

MAX_BODY_BYTES = 1024 * 1024
# At most this many earlier thread messages and attachments in one task.
MAX_THREAD_MESSAGES = 1000
MAX_ATTACHMENTS = 50
# Standard base64 alphabet, padded; the length is checked to be a multiple of 4 separately.
BASE64 = re.compile(r"[A-Za-z0-9+/]*={0,2}")
# Finished tasks are kept this long for get_task_result; then they are "not found".
TASK_TTL_SECONDS = 3600


class RpcError(Exception):
    """A failure that goes on the wire as a JSON-RPC error object."""

    def __init__(self, code, data=None, message=None):
        super().__init__(message or MESSAGES.get(code, "Server error"))
        self.code = code
        self.data = data

    def to_object(self):
        error = {"code": self.code, "message": str(self)}
        if self.data is not None:
            error["data"] = self.data
        return error


class Cancelled(Exception):
    pass


def run_model(text, messages, attachments, cancelled):
    """Stand-in for the real model call.

    `messages` are the earlier messages of the Slack thread, oldest first ({role, text, ...});
    a real agent sends them as the model's earlier turns, then `text` as the user's turn.
    `attachments` are the message's files ({name, mimetype, size, data}); a real agent decodes
    `data` (`base64.b64decode`) and passes the bytes to the model as an image or a document.
    The echo only names them.

    `#sleep=<ms>` makes it slow on purpose, so the conformance kit can drive the
    accepted / get_task_result / cancel_task path. Waiting on the event (not time.sleep)
    lets cancel_task stop the work at once.
    """
    match = re.search(r"#sleep=(\d+)", text)
    if match and cancelled.wait(int(match.group(1)) / 1000):
        raise Cancelled()
    context = []
    if messages:
        context.append(f"thread: {len(messages)} earlier message{'' if len(messages) == 1 else 's'}")
    if attachments:
        context.append("files: " + ", ".join(attachment["name"] for attachment in attachments))
    return "echo: " + text + (f" ({'; '.join(context)})" if context else "")


def error_response(request_id, code, data=None):
    return {"jsonrpc": "2.0", "error": RpcError(code, data).to_object(), "id": request_id}


def issue(path, message):
    return {"path": path, "message": message}


def invalid_field(field, message):
    return RpcError(INVALID_PARAMS, [issue(field, message)])


def named_params(params):
    if params is None:
        return {}
    if not isinstance(params, dict):
        raise invalid_field("(params)", "params must be an object (by name), not an array")
    return params


def required_string(params, field):
    value = params.get(field)
    if not isinstance(value, str) or value == "":
        raise invalid_field(field, f"{field} is required and must be a non-empty string")
    return value


def is_string(value, non_empty=False):
    return isinstance(value, str) and not (non_empty and value == "")


def is_count(value):
    # A whole number ≥ 0; JSON 3.0 is 3 too. bool is an int in Python, but true is not a number.
    return isinstance(value, (int, float)) and not isinstance(value, bool) and float(value).is_integer() and value >= 0


def base64_length(data):
    """The byte length a base64 string decodes to (standard alphabet, padded)."""
    return len(data) // 4 * 3 - (2 if data.endswith("==") else 1 if data.endswith("=") else 0)


def thread_messages(params, issues):
    """`messages`: earlier messages of the Slack thread, oldest first; the current one is `text`."""
    messages = params.get("messages", [])
    if not isinstance(messages, list):
        issues.append(issue("messages", "messages must be an array"))
        return []
    if len(messages) > MAX_THREAD_MESSAGES:
        issues.append(issue("messages", f"messages must have at most {MAX_THREAD_MESSAGES} entries"))
        return []
    for i, message in enumerate(messages):
        path = f"messages.{i}"
        if not isinstance(message, dict):
            issues.append(issue(path, "each message must be an object"))
            continue
        if message.get("role") not in ("user", "assistant"):
            issues.append(issue(f"{path}.role", 'role must be "user" or "assistant"'))
        if not is_string(message.get("text")):
            issues.append(issue(f"{path}.text", "text must be a string"))
        if "user_id" in message and not is_string(message["user_id"]):
            issues.append(issue(f"{path}.user_id", "user_id must be a string"))
        if not is_string(message.get("ts"), non_empty=True):
            issues.append(issue(f"{path}.ts", "ts must be a non-empty string"))
    return messages


def attachment_list(params, issues):
    """`attachments`: the message's files, each with its bytes in `data` (base64)."""
    attachments = params.get("attachments", [])
    if not isinstance(attachments, list):
        issues.append(issue("attachments", "attachments must be an array"))
        return []
    if len(attachments) > MAX_ATTACHMENTS:
        issues.append(issue("attachments", f"attachments must have at most {MAX_ATTACHMENTS} entries"))
        return []
    for i, attachment in enumerate(attachments):
        path = f"attachments.{i}"
        if not isinstance(attachment, dict):
            issues.append(issue(path, "each attachment must be an object"))
            continue
        for field in ("name", "mimetype"):
            if not is_string(attachment.get(field), non_empty=True):
                issues.append(issue(f"{path}.{field}", f"{field} is required and must be a non-empty string"))
        size, data = attachment.get("size"), attachment.get("data")
        size_ok = is_count(size)
        if not size_ok:
            issues.append(issue(f"{path}.size", "size is required and must be a whole number ≥ 0"))
        data_ok = is_string(data) and len(data) % 4 == 0 and BASE64.fullmatch(data) is not None
        if not data_ok:
            issues.append(issue(f"{path}.data", "data must be base64 (standard alphabet, padded)"))
        if size_ok and data_ok and base64_length(data) != size:
            issues.append(issue(f"{path}.size", "size must be the byte length of data"))
    return attachments


def is_valid_id(value):
    # bool is an int in Python, but true/false are not valid JSON-RPC ids.
    return value is None or isinstance(value, str) or (isinstance(value, (int, float)) and not isinstance(value, bool))


class Task:
    def __init__(self):
        self.id = "task-" + uuid.uuid4().hex
        self.status = "working"  # working → success | failed | cancelled
        self.result = None
        self.error = None
        self.cancelled = threading.Event()
        self.done = threading.Event()
        self.created = time.monotonic()


class Agent:
    def __init__(self, sync_budget_seconds):
        self.sync_budget = sync_budget_seconds
        self.lock = threading.Lock()
        self.tasks = {}
        # The verification zone reuses a request id when it retries a task: same id, same task.
        self.task_of_request = {}

    # -- methods -----------------------------------------------------------------------------

    def execute_task(self, params, request_id):
        params = named_params(params)
        issues = []
        text = params.get("text")
        if not is_string(text, non_empty=True):
            issues.append(issue("text", "text is required and must be a non-empty string"))
        messages = thread_messages(params, issues)
        attachments = attachment_list(params, issues)
        if issues:
            raise RpcError(INVALID_PARAMS, issues)
        request_key = None if request_id is None else json.dumps(request_id)
        with self.lock:
            self._forget_old_tasks()
            task = self.task_of_request.get(request_key) if request_key else None
            repeated = task is not None
            if not repeated:
                task = Task()
                self.tasks[task.id] = task
                if request_key:
                    self.task_of_request[request_key] = task
        if not repeated:
            threading.Thread(target=self._run, args=(task, text, messages, attachments), daemon=True).start()
            # Answer with the result if it comes within the budget; else the task runs on.
            task.done.wait(self.sync_budget)
        with self.lock:
            if task.status == "working":
                return {"status": "accepted", "task_id": task.id}
            return self._final_answer(task)

    def get_task_result(self, params, _request_id):
        task = self._find(required_string(named_params(params), "task_id"))
        with self.lock:
            if task.status == "working":
                return {"status": "working", "task_id": task.id}
            return self._final_answer(task)

    def cancel_task(self, params, _request_id):
        task = self._find(required_string(named_params(params), "task_id"))
        with self.lock:
            if task.status == "working":
                task.status = "cancelled"
                task.cancelled.set()
            if task.status == "cancelled":
                return {"status": "cancelled", "task_id": task.id}
            # Already finished: answer with its final state.
            return self._final_answer(task)

    # -- tasks -------------------------------------------------------------------------------

    def _run(self, task, text, messages, attachments):
        try:
            answer = run_model(text, messages, attachments, task.cancelled)
            with self.lock:
                if task.status == "working":
                    task.status, task.result = "success", {"status": "success", "response_text": answer}
        except Cancelled:
            pass
        except RpcError as error:
            # A domain error of the model (e.g. -32010 throttled) goes to the caller as it is.
            with self.lock:
                if task.status == "working":
                    task.status, task.error = "failed", error
        except Exception as error:  # noqa: BLE001 - any failure of the model is the task's failure
            # The cause stays in our log; the caller gets a generic -32603, never a stack trace.
            print(f"task {task.id} failed: {error!r}", file=sys.stderr)
            with self.lock:
                if task.status == "working":
                    task.status, task.error = "failed", RpcError(INTERNAL_ERROR)
        finally:
            task.done.set()

    def _final_answer(self, task):
        if task.status == "success":
            return task.result
        if task.status == "cancelled":
            raise RpcError(TASK_CANCELLED)
        raise task.error

    def _find(self, task_id):
        with self.lock:
            task = self.tasks.get(task_id)
        if task is None:
            raise RpcError(TASK_NOT_FOUND)
        return task

    def _forget_old_tasks(self):
        cutoff = time.monotonic() - TASK_TTL_SECONDS
        for task_id in [t.id for t in self.tasks.values() if t.created < cutoff and t.status != "working"]:
            del self.tasks[task_id]
        for key in [k for k, t in self.task_of_request.items() if t.id not in self.tasks]:
            del self.task_of_request[key]

    # -- JSON-RPC ----------------------------------------------------------------------------

    def handle_body(self, raw):
        """Body in, body out; None means "no response" (notifications)."""
        try:
            message = json.loads(raw.decode("utf-8"), parse_constant=reject_constant)
        except (UnicodeDecodeError, ValueError, RecursionError):
            return dump(error_response(None, PARSE_ERROR))
        if isinstance(message, list):
            if not message:
                return dump(error_response(None, INVALID_REQUEST))
            responses = [r for r in (self.handle_one(m) for m in message) if r is not None]
            return dump(responses) if responses else None
        response = self.handle_one(message)
        return None if response is None else dump(response)

    def handle_one(self, message):
        if not isinstance(message, dict):
            return error_response(None, INVALID_REQUEST)
        is_notification = "id" not in message
        request_id = message.get("id")
        params = message.get("params")
        method = message.get("method")
        if (
            message.get("jsonrpc") != "2.0"
            or not isinstance(method, str)
            or not is_valid_id(request_id)
            or ("params" in message and not isinstance(params, (dict, list)))
        ):
            return error_response(None, INVALID_REQUEST)

        handler = {
            "execute_task": self.execute_task,
            "get_task_result": self.get_task_result,
            "cancel_task": self.cancel_task,
        }.get(method)
        if handler is None:
            return None if is_notification else error_response(request_id, METHOD_NOT_FOUND)
        if is_notification:
            # Nobody waits for the answer, so do not hold the HTTP response for the sync budget.
            threading.Thread(target=self._call, args=(handler, params, None), daemon=True).start()
            return None
        return self._call(handler, params, request_id)

    def _call(self, handler, params, request_id):
        try:
            return {"jsonrpc": "2.0", "result": handler(params, request_id), "id": request_id}
        except RpcError as error:
            return {"jsonrpc": "2.0", "error": error.to_object(), "id": request_id}
        except Exception as error:  # noqa: BLE001 - never let a bug become a non-JSON-RPC answer
            print(f"unexpected error in {handler.__name__}: {error!r}", file=sys.stderr)
            return error_response(request_id, INTERNAL_ERROR)


def reject_constant(name):
    # NaN and Infinity are not JSON, though Python's parser accepts them by default.
    raise ValueError(f"{name} is not valid JSON")


def dump(value):
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "zone-example-python/1.0"
    # Headers and body go out in two writes; without this, Nagle's algorithm and delayed ACKs
    # add ~40 ms to every keep-alive response.
    disable_nagle_algorithm = True

    def do_POST(self):
        if self._path() != "/invocations":
            return self._send_json(404, '{"error":"Not Found"}')
        try:
            length = int(self.headers.get("Content-Length") or "0")
        except ValueError:
            return self._send_json(400, '{"error":"Bad Content-Length"}')
        if length > MAX_BODY_BYTES:
            self.close_connection = True
            return self._send_json(413, '{"error":"Payload Too Large"}')
        answer = self.server.agent.handle_body(self.rfile.read(length))
        if answer is None:
            self.send_response(204)
            self.end_headers()
            return None
        # Every JSON-RPC answer, errors included, is HTTP 200: behind AgentCore a non-2xx status
        # becomes the caller's RuntimeClientError and the JSON-RPC error would be lost.
        return self._send_json(200, answer)

    def do_GET(self):
        path = self._path()
        if path == "/ping":
            return self._send_json(200, dump({"status": "Healthy", "time_of_last_update": self.server.started}))
        if path == "/invocations":
            return self._send_json(405, '{"error":"Method Not Allowed"}', {"Allow": "POST"})
        return self._send_json(404, '{"error":"Not Found"}')

    def _path(self):
        return self.path.split("?", 1)[0]

    def _send_json(self, status, text, headers=None):
        body = text.encode("utf-8")
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        for name, value in (headers or {}).items():
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(body)
        return None

    def log_message(self, format, *args):  # noqa: A002 - the base class names it so
        if self.server.verbose:
            super().log_message(format, *args)


def main():
    parser = argparse.ArgumentParser(description="A minimal zone-contract execution agent.")
    parser.add_argument("--host", default="127.0.0.1", help="0.0.0.0 on AgentCore")
    parser.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    parser.add_argument("--sync-budget-ms", type=int, default=2000, help="answer accepted past this")
    parser.add_argument("--verbose", action="store_true", help="log every HTTP request")
    args = parser.parse_args()

    server = ThreadingHTTPServer((args.host, args.port), Handler)
    server.daemon_threads = True
    server.agent = Agent(args.sync_budget_ms / 1000)
    server.started = int(time.time())
    server.verbose = args.verbose
    host, port = server.server_address[:2]
    print(f"execution agent listening on http://{host}:{port}/invocations", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass
    finally:
        server.server_close()


if __name__ == "__main__":
    main()
