/**
 * The local playground (http://127.0.0.1:3000/): type a message; it goes to the real ingress as
 * a signed Slack event; the reply appears in the thread and, beside it, every hop the request took.
 * "Reply in thread" continues a conversation (the agent gets its earlier messages), with or
 * without a mention, and files can be attached. One self-contained page, no build step.
 */
export const PLAYGROUND_HTML = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>slack-zone-bridge playground</title>
<meta name="viewport" content="width=device-width, initial-scale=1">
<style>
  body { font: 14px/1.45 system-ui, sans-serif; margin: 0; background: #f6f6f8; color: #1d1c1d; }
  header { background: #3f0e40; color: #fff; padding: 10px 18px; }
  header small { opacity: .75; margin-left: 8px; }
  main { max-width: 1100px; margin: 0 auto; padding: 16px; }
  form { display: flex; gap: 8px; margin-bottom: 16px; }
  input[type=text] { flex: 1; padding: 10px; border: 1px solid #bbb; border-radius: 6px; font-size: 15px; }
  button { padding: 10px 18px; border: 0; border-radius: 6px; background: #007a5a; color: #fff; font-weight: 600; cursor: pointer; }
  .hint { color: #666; margin: -8px 0 16px; font-size: 12px; }
  .request { display: grid; grid-template-columns: 1fr 1fr; gap: 16px; background: #fff; border: 1px solid #ddd; border-radius: 8px; padding: 12px 14px; margin-bottom: 12px; }
  .you { font-weight: 600; }
  .reply { margin-top: 8px; padding: 8px 10px; border-left: 3px solid #007a5a; background: #f3fbf8; white-space: pre-wrap; }
  .reply.streaming { border-left-color: #e8a400; }
  .waiting { color: #888; font-style: italic; margin-top: 8px; }
  .state { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; background: #eee; margin-left: 6px; }
  .state.done { background: #d8f5e8; } .state.failed { background: #fde2e1; } .state.working { background: #fff4cc; }
  table { width: 100%; border-collapse: collapse; font-size: 12px; }
  td, th { text-align: left; padding: 2px 6px; border-bottom: 1px solid #eee; vertical-align: top; }
  td.ms { text-align: right; font-variant-numeric: tabular-nums; white-space: nowrap; }
  code { font-size: 11px; color: #555; }
  .compose-extra { display: flex; gap: 14px; align-items: center; margin: -8px 0 12px; font-size: 13px; }
  #thread-bar[hidden] { display: none; }
  #thread-bar { background: #fff4cc; padding: 2px 8px; border-radius: 10px; }
  .link { background: none; color: #1264a3; padding: 0; font-weight: 400; }
  .files { color: #555; font-size: 12px; }
</style>
</head>
<body>
<header><strong>slack-zone-bridge</strong><small>local playground: verification zone ⇄ execution zone</small></header>
<main>
  <form id="say">
    <input id="text" type="text" autocomplete="off" placeholder="Ask something… (try: hello · slow #sleep=5000 · a long answer #stream=150 · #fail)" autofocus>
    <button type="submit">Send</button>
  </form>
  <div class="compose-extra">
    <label>📎 <input id="files" type="file" multiple></label>
    <span id="thread-bar" hidden>in thread <code id="thread-ts"></code>
      <label><input id="follow-up" type="checkbox"> without a mention</label>
      <button type="button" class="link" id="leave-thread">✕ new thread</button></span>
  </div>
  <p class="hint">Each message is signed like a Slack event and posted to <code>/slack/events</code>. The right column shows its trace. Try <code>#context</code> in a thread: the echo agent lists the earlier turns it received.</p>
  <section id="requests"></section>
</main>
<script>
const requests = [];
const box = document.getElementById('requests');
let thread = null;

function setThread(ts) {
  thread = ts;
  document.getElementById('thread-bar').hidden = !ts;
  document.getElementById('thread-ts').textContent = ts || '';
  if (!ts) document.getElementById('follow-up').checked = false;
  document.getElementById('text').focus();
}
document.getElementById('leave-thread').addEventListener('click', () => setThread(null));
box.addEventListener('click', (event) => {
  const button = event.target.closest('[data-thread]');
  if (button) setThread(button.getAttribute('data-thread'));
});

function readFile(file) {
  return new Promise((resolve, reject) => {
    const reader = new FileReader();
    reader.onload = () => resolve({ name: file.name, mimetype: file.type, data: String(reader.result).split(',')[1] || '' });
    reader.onerror = () => reject(reader.error);
    reader.readAsDataURL(file);
  });
}

document.getElementById('say').addEventListener('submit', async (event) => {
  event.preventDefault();
  const input = document.getElementById('text');
  const picker = document.getElementById('files');
  const text = input.value.trim();
  const files = await Promise.all([...picker.files].map(readFile));
  if (!text && !files.length) return;
  input.value = '';
  picker.value = '';
  const body = { text, files };
  if (thread) {
    body.thread_ts = thread;
    body.follow_up = document.getElementById('follow-up').checked;
  }
  const response = await fetch('/api/say', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const sent = await response.json();
  if (!response.ok) {
    requests.unshift({ text, files: [], eventId: '', error: sent.error || ('HTTP ' + response.status), trace: null });
  } else {
    requests.unshift({ text, files: files.map((f) => f.name), eventId: sent.event_id, threadTs: sent.thread_ts, ack: sent.status, trace: null });
  }
  render();
});

function stateOf(trace) {
  if (!trace) return ['sent', ''];
  const hops = trace.events.map((e) => e.hop);
  if (hops.includes('reply-posted')) return hops.includes('failed') || hops.includes('dead-lettered') ? ['answered with an error', 'failed'] : ['done', 'done'];
  const polls = trace.events.filter((e) => e.hop === 'poll');
  const last = polls[polls.length - 1];
  if (last && hops.includes('streamed')) return ['streaming (poll ' + polls.length + ')', 'working'];
  if (last) return ['working (poll ' + polls.length + (last.detail && last.detail.state ? ', ' + last.detail.state : '') + ')', 'working'];
  if (hops.includes('accepted')) return ['accepted', 'working'];
  if (hops.includes('streamed')) return ['streaming', 'working'];
  if (hops.includes('execute-sent')) return ['executing', 'working'];
  if (hops.includes('queued')) return ['queued', 'working'];
  return [hops[hops.length - 1] || 'sent', ''];
}

function describe(event) {
  const d = event.detail || {};
  switch (event.hop) {
    case 'ingress': return 'Slack event verified (' + (d.event_id || '') + ')';
    case 'queued': return 'task queued';
    case 'execute-sent': return 'execute_task sent · transport ' + d.transport + ' · protocol ' + d.protocol + (d.context_messages ? ' · ' + d.context_messages + ' earlier messages' : '') + (d.attachments ? ' · ' + d.attachments + ' files' : '') + ' · request id <code>' + event.requestId + '</code>';
    case 'accepted': return 'accepted · task <code>' + d.task_id + '</code> · next poll in ' + d.next_poll_s + ' s';
    case 'poll': return 'poll #' + d.attempt + ' → ' + d.outcome + (d.state ? ' (' + d.state + ')' : '');
    case 'failed': return 'failed (code ' + d.code + ')';
    case 'retry': return 'transient failure (' + d.code + '), queue will retry';
    case 'reply-queued': return 'reply queued (' + d.kind + ')';
    case 'reply-posted': return 'reply posted to Slack';
    case 'sign-of-life': return 'sign of life shown (' + d.how + ')';
    case 'streamed': return 'answer so far shown (' + d.chars + ' characters)';
    case 'refused': return 'refused' + (d.reason ? ' (' + d.reason + ')' : '');
    case 'dead-lettered': return 'dead-lettered';
    default: return event.hop;
  }
}

function escapeHtml(text) {
  return text.replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

function render() {
  box.innerHTML = requests.map((r) => {
    const [label, cls] = stateOf(r.trace);
    const replies = (r.trace && r.trace.replies) || [];
    const start = r.trace && r.trace.events.length ? r.trace.events[0].at : 0;
    const rows = r.trace ? r.trace.events.map((e) => '<tr><td class="ms">+' + (e.at - start) + ' ms</td><td>' + describe(e) + '</td></tr>').join('') : '';
    if (r.error) return '<div class="request"><div class="you">you: ' + escapeHtml(r.text) + '<span class="state failed">' + escapeHtml(r.error) + '</span></div></div>';
    return '<div class="request" data-event-id="' + r.eventId + '">' +
      '<div><div class="you">you: ' + escapeHtml(r.text) + '<span class="state ' + cls + '">' + label + '</span></div>' +
      (r.files && r.files.length ? '<div class="files">📎 ' + r.files.map(escapeHtml).join(', ') + '</div>' : '') +
      (replies.length ? replies.map((p) => '<div class="reply' + (p.streaming ? ' streaming' : '') + '">' + escapeHtml(p.text) + (p.streaming ? ' ▍' : '') + '</div>').join('') : '<div class="waiting">' + (r.trace && r.trace.status ? '⏳ assistant ' + escapeHtml(r.trace.status) : 'waiting for the reply…') + '</div>') +
      (r.threadTs ? '<button type="button" class="link" data-thread="' + escapeHtml(r.threadTs) + '">↳ reply in thread</button>' : '') +
      '</div><div><table class="trace"><tbody>' + rows + '</tbody></table></div></div>';
  }).join('');
}

async function refresh() {
  const open = requests.filter((r) => r.eventId && (!r.trace || !r.trace.events.some((e) => e.hop === 'reply-posted')));
  for (const r of open) {
    const response = await fetch('/api/events/' + encodeURIComponent(r.eventId));
    if (response.ok) r.trace = await response.json();
  }
  if (open.length) render();
}
setInterval(refresh, 250);
</script>
</body>
</html>
`;
