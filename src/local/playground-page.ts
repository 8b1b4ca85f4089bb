/**
 * The local playground (http://127.0.0.1:3000/): type a message; it goes to the real ingress as
 * a signed Slack event; the reply appears in the thread and, beside it, every hop the request took.
 * "Reply in thread" continues a conversation (the agent gets its earlier messages), with or
 * without a mention, and files can be attached. The agent surface works as in Slack, each action
 * signed and sent through the real ingress too: a thread's agent session shows its status, with
 * a Stop button while it is processing; "open the agent's DM" offers the suggested prompts (a
 * chip fills the text box); 👍 / 👎 under an answer record feedback (👎 opens the "what went
 * wrong" form) and show the thanks only the clicker sees; an agent's question shows its buttons,
 * and a click answers it ("Type an answer" opens the form). One self-contained page, no build step.
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
  .cards { margin: 8px 0 0; padding: 0; list-style: none; font-size: 13px; }
  .cards li { padding: 2px 0; } .cards .plan { font-weight: 600; } .cards .details { color: #666; margin-left: 6px; }
  .waiting { color: #888; font-style: italic; margin-top: 8px; }
  .shared-file { margin-top: 6px; font-size: 13px; }
  .shared-file img.preview { max-width: 240px; max-height: 160px; margin-top: 4px; border: 1px solid #ddd; image-rendering: pixelated; }
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
  .state.stopped { background: #eee; }
  .session { display: inline-block; padding: 1px 8px; border-radius: 10px; font-size: 12px; background: #e8f0fe; margin-left: 6px; }
  .session.processing { background: #fff4cc; }
  button.stop { padding: 1px 10px; margin-left: 6px; background: #e01e5a; font-size: 12px; }
  button.stop[disabled] { opacity: .6; cursor: default; }
  .feedback { margin-top: 4px; display: flex; gap: 6px; }
  .feedback button { padding: 1px 10px; background: #fff; border: 1px solid #ccc; color: #1d1c1d; font-weight: 400; }
  .feedback button.given { background: #e8f5fa; border-color: #1264a3; }
  .ephemeral { margin-top: 6px; padding: 4px 8px; border-radius: 4px; background: #f4f4f4; color: #555; font-size: 12px; }
  .feedback-form { display: block; margin: 6px 0 0; padding: 8px 10px; border: 1px solid #ddd; border-radius: 6px; }
  .feedback-form textarea { display: block; width: 100%; box-sizing: border-box; margin: 4px 0 6px; font: inherit; }
  #prompts[hidden] { display: none; }
  #prompts { display: flex; flex-wrap: wrap; gap: 6px; align-items: center; margin: -4px 0 12px; font-size: 13px; }
  #prompts .chip { padding: 3px 12px; border: 1px solid #1264a3; border-radius: 14px; background: #fff; color: #1264a3; font-weight: 400; }
</style>
</head>
<body>
<header><strong>slack-zone-bridge</strong><small>local playground: verification zone ⇄ execution zone</small></header>
<main>
  <form id="say">
    <input id="text" type="text" autocomplete="off" placeholder="Ask something… (try: hello · slow #sleep=5000 · a long answer #stream=150 · plan it #steps=3 · deploy #ask=Ship it? · #fail)" autofocus>
    <button type="submit">Send</button>
  </form>
  <div class="compose-extra">
    <label title="The channel the message is said in: a channel an agent answers in routes it there">in <select id="channel"><option value="">#local</option></select></label>
    <label><span aria-hidden="true">📎</span> attach files <input id="files" type="file" multiple></label>
    <span id="thread-bar" hidden>in thread <code id="thread-ts"></code>
      <label><input id="follow-up" type="checkbox"> without a mention</label>
      <button type="button" class="link" id="leave-thread"><span aria-hidden="true">✕</span> new thread</button></span>
    <button type="button" class="link" id="open-dm"><span aria-hidden="true">💬</span> open the agent's DM</button>
  </div>
  <div id="prompts" hidden></div>
  <p class="hint">Each message is signed like a Slack event and posted to <code>/slack/events</code>. The right column shows its trace. Try <code>#context</code> in a thread: the echo agent lists the earlier turns it received.</p>
  <section id="requests"></section>
</main>
<script>
const requests = [];
const box = document.getElementById('requests');
let thread = null;
/** The channel of the thread being replied in: a reply stays in its thread's channel. */
let threadChannel = null;
/** What is typed into each open "what went wrong" form, by its trigger id (a re-render keeps it). */
const drafts = {};
let shown = '';

async function postJson(path, body) {
  const response = await fetch(path, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const answer = await response.json();
  if (!response.ok) throw new Error(answer.error || ('HTTP ' + response.status));
  return answer;
}
/** Follow a request a while after something was done to it (a Stop, a click, a form). */
function watch(r, ms) { r.watchUntil = Math.max(r.watchUntil || 0, Date.now() + ms); }

function setThread(ts, channel) {
  thread = ts;
  threadChannel = ts ? channel || null : null;
  document.getElementById('channel').disabled = Boolean(ts);
  document.getElementById('thread-bar').hidden = !ts;
  document.getElementById('thread-ts').textContent = ts || '';
  if (!ts) document.getElementById('follow-up').checked = false;
  document.getElementById('text').focus();
}
document.getElementById('leave-thread').addEventListener('click', () => setThread(null));
box.addEventListener('click', async (event) => {
  const button = event.target.closest('[data-thread]');
  if (button) setThread(button.getAttribute('data-thread'), button.getAttribute('data-channel'));
  const r = requestOf(event.target);
  const stop = event.target.closest('[data-stop]');
  if (stop && r) {
    // Stop on the thread's agent session: a signed agent_session_stopped through the ingress.
    r.stopping = true;
    watch(r, 15000);
    render();
    try { await postJson('/api/stop', { thread_ts: stop.getAttribute('data-stop'), channel: stop.getAttribute('data-channel') }); }
    catch (error) { r.note = 'Stop failed: ' + error.message; r.stopping = false; render(); }
  }
  const choice = event.target.closest('[data-action-id]');
  if (choice && r) {
    // A question's button: a signed block_actions carrying its value, through the ingress; "Type an answer" opens the form.
    try {
      const sent = await postJson('/api/button/click', { message_ts: choice.getAttribute('data-ts'), action_id: choice.getAttribute('data-action-id') });
      r.interactedAt = sent.at;
      (r.triggers = r.triggers || []).push(sent.trigger_id);
      watch(r, 15000);
    } catch (error) { r.note = 'the click failed: ' + error.message; render(); }
  }
  const rating = event.target.closest('[data-feedback]');
  if (rating && r) {
    // 👍 / 👎: a signed block_actions carrying the button's value, through the ingress.
    try {
      const sent = await postJson('/api/feedback/click', { message_ts: rating.getAttribute('data-ts'), value: rating.getAttribute('data-feedback') });
      r.interactedAt = sent.at;
      (r.triggers = r.triggers || []).push(sent.trigger_id);
      watch(r, 10000);
    } catch (error) { r.note = 'feedback failed: ' + error.message; render(); }
  }
});
box.addEventListener('input', (event) => {
  const form = event.target.closest('.feedback-form');
  if (form) drafts[form.getAttribute('data-trigger')] = event.target.value;
});
box.addEventListener('submit', async (event) => {
  const form = event.target.closest('.feedback-form');
  const r = requestOf(event.target);
  if (!form || !r) return;
  event.preventDefault();
  const trigger = form.getAttribute('data-trigger');
  const text = (drafts[trigger] || '').trim();
  if (!text) return;
  try {
    const sent = await postJson('/api/feedback/form', { trigger_id: trigger, text });
    r.interactedAt = sent.at;
    (r.submitted = r.submitted || []).push(trigger);
    watch(r, 10000);
    render();
  } catch (error) { r.note = 'the form failed: ' + error.message; render(); }
});
function requestOf(element) {
  const card = element.closest('[data-event-id]');
  return card ? requests.find((r) => r.eventId === card.getAttribute('data-event-id')) : undefined;
}

// The agent's DM opened (a signed app_home_opened): its suggested prompts, as chips that fill the text box.
document.getElementById('open-dm').addEventListener('click', async () => {
  const bar = document.getElementById('prompts');
  bar.hidden = false;
  bar.textContent = 'opening the agent’s DM…';
  try {
    const sent = await postJson('/api/open', {});
    for (let tries = 0; tries < 40; tries++) {
      const state = await (await fetch('/api/state')).json();
      const handled = state.requests.some((t) => t.requestId === sent.event_id && t.events.some((e) => e.hop === 'slack-action'));
      const offered = state.surface.filter((s) => s.type === 'prompts').pop();
      if (handled && offered) {
        bar.innerHTML = (offered.title ? '<span class="prompts-title">' + escapeHtml(offered.title) + '</span>' : '') +
          offered.prompts.map((p) => '<button type="button" class="chip" data-prompt="' + escapeHtml(p.message) + '">' + escapeHtml(p.title) + '</button>').join('');
        return;
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    bar.textContent = 'no prompts offered (AGENT_PROMPTS_JSON may offer none)';
  } catch (error) { bar.textContent = 'could not open the DM: ' + error.message; }
});
document.getElementById('prompts').addEventListener('click', (event) => {
  const chip = event.target.closest('[data-prompt]');
  if (!chip) return;
  const input = document.getElementById('text');
  input.value = chip.getAttribute('data-prompt');
  input.focus();
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
  const channel = thread ? threadChannel : document.getElementById('channel').value || null;
  const body = { text, files };
  if (channel) body.channel = channel;
  if (thread) {
    body.thread_ts = thread;
    body.follow_up = document.getElementById('follow-up').checked;
  }
  const response = await fetch('/api/say', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const sent = await response.json();
  if (!response.ok) {
    requests.unshift({ text, files: [], eventId: '', error: sent.error || ('HTTP ' + response.status), trace: null });
  } else {
    requests.unshift({ text, files: files.map((f) => f.name), eventId: sent.event_id, threadTs: sent.thread_ts, channel, ack: sent.status, trace: null });
  }
  render();
});

/**
 * A reply's text as Slack shows it: escaped, then Slack mrkdwn's emphasis — _italic_, *bold*,
 * ~strike~ — and code spans, each only where Slack takes it (at word boundaries, on one line), so
 * "_Stopped._" reads as an italic "Stopped." and snake_case_names stay as written.
 */
function mrkdwnHtml(text) {
  const tick = String.fromCharCode(96);
  const code = new RegExp('(' + tick + '[^' + tick + '\\\\n]+' + tick + ')');
  const around = (mark, tag) => (html) => html.replace(new RegExp('(^|[\\\\s(])\\\\' + mark + '([^\\\\s' + mark + '](?:[^' + mark + '\\\\n]*[^\\\\s' + mark + '])?)\\\\' + mark + '(?=$|[\\\\s).,!?:;])', 'gm'), '$1<' + tag + '>$2</' + tag + '>');
  return escapeHtml(text).split(code).map((part, i) => (i % 2 === 1 ? '<code>' + part.slice(1, -1) + '</code>' : [around('_', 'em'), around('*', 'strong'), around('~', 'del')].reduce((html, apply) => apply(html), part))).join('');
}

function stateOf(trace) {
  if (!trace) return ['sent', ''];
  const hops = trace.events.map((e) => e.hop);
  if (hops.includes('stop')) return hops.includes('reply-posted') ? ['stopped', 'stopped'] : ['stopping', 'working'];
  if (hops.includes('reply-posted')) return hops.includes('failed') || hops.includes('dead-lettered') ? ['answered with an error', 'failed'] : ['done', 'done'];
  // A question waits for a person (its buttons are in the reply); answered, the same task resumes.
  if (hops.lastIndexOf('asked') > hops.lastIndexOf('answered')) return ['waiting for your answer', 'working'];
  const polls = trace.events.filter((e) => e.hop === 'poll');
  const last = polls[polls.length - 1];
  if (last && hops.includes('streamed')) return ['streaming (poll ' + polls.length + ')', 'working'];
  if (last) return ['working (poll ' + polls.length + (last.detail && last.detail.state ? ', ' + last.detail.state : '') + ')', 'working'];
  // Text coming in says more than the task's acceptance, which comes with it when a stream is held.
  if (hops.includes('streamed')) return ['streaming the answer', 'working'];
  if (hops.includes('accepted')) return ['working on it', 'working'];
  if (hops.includes('execute-sent')) return ['executing', 'working'];
  if (hops.includes('queued')) return ['queued', 'working'];
  return [hops[hops.length - 1] || 'sent', ''];
}

function describe(event) {
  const d = event.detail || {};
  switch (event.hop) {
    case 'ingress': return 'Slack event verified (' + (d.event_id || '') + ')';
    case 'queued': return 'task queued' + (d.agent ? ' for agent <strong>' + escapeHtml(d.agent) + '</strong> (by ' + escapeHtml(d.routed_by) + ')' : '');
    case 'execute-sent': return 'execute_task sent · transport ' + d.transport + ' · protocol ' + d.protocol + (d.context_messages ? ' · ' + d.context_messages + ' earlier messages' : '') + (d.attachments ? ' · ' + d.attachments + ' files' : '') + ' · request id <code>' + event.requestId + '</code>' + (d.agent ? ' · agent ' + escapeHtml(d.agent) : '');
    case 'accepted': return 'accepted · task <code>' + d.task_id + '</code>' + (d.hold_ms !== undefined ? ' · its stream held up to ' + d.hold_ms + ' ms' : ' · next poll in ' + d.next_poll_s + ' s');
    case 'poll': return 'poll #' + d.attempt + ' → ' + d.outcome + (d.state ? ' (' + d.state + ')' : '') + (d.held_ms !== undefined ? ' · stream held ' + d.held_ms + ' ms' : '');
    case 'failed': return 'failed (code ' + d.code + ')';
    case 'retry': return 'transient failure (' + d.code + '), queue will retry';
    case 'reply-queued': return 'reply queued (' + d.kind + ')';
    case 'reply-posted': return 'reply posted to Slack';
    case 'files-posted': return 'files shared in the thread (' + d.shared + ' of ' + d.files + ')';
    case 'sign-of-life': return 'sign of life shown (' + d.how + ')';
    case 'streamed': return 'answer so far shown (' + d.chars + ' characters)';
    case 'refused': return 'refused' + (d.reason ? ' (' + d.reason + ')' : '');
    case 'dead-lettered': return 'dead-lettered';
    case 'asked': return 'question asked · task <code>' + escapeHtml(d.task_id || '') + '</code> paused until someone answers';
    case 'answered': return 'answered <strong>' + escapeHtml(d.answer || '') + '</strong> by ' + escapeHtml(d.user || '') + ' · the same task resumes';
    case 'stop': return 'Stop pressed → ' + (d.cancels === 'cancel_task' ? 'cancel_task sent' : 'cancelled when execute_task returns');
    case 'feedback': return 'feedback recorded' + (d.value === 'positive' ? ' 👍' : d.value === 'negative' ? ' 👎' : '') + (d.comment ? ' (with what went wrong)' : '');
    default: return event.hop;
  }
}

function escapeHtml(text) {
  return String(text).replace(/[&<>"]/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;' })[c]);
}

/** The thread's agent session, with Stop while it is processing and this request is not answered. */
function sessionHtml(r) {
  const session = r.trace && r.trace.session;
  if (!session) return '';
  const done = r.trace.events.some((e) => e.hop === 'reply-posted');
  // Stop cancels a task waiting on a question too.
  const stop = (session.status === 'processing' || session.status === 'suspended') && !done
    ? '<button type="button" class="stop" data-stop="' + escapeHtml(session.threadTs) + '" data-channel="' + escapeHtml(session.channel) + '"' + (r.stopping ? ' disabled>stopping…' : '>■ Stop') + '</button>'
    : '';
  return '<span class="session ' + escapeHtml(session.status) + '">agent session: ' + escapeHtml(session.status) + '</span>' + stop;
}

/** A question's buttons (docs/architecture.md, "Questions"), clickable until it is answered. */
function questionButtonsHtml(reply) {
  if (!reply.buttons || !reply.buttons.length) return '';
  return '<div class="feedback" role="group" aria-label="Answer the question">' + reply.buttons.map((b) => '<button type="button" data-action-id="' + escapeHtml(b.actionId) + '" data-ts="' + escapeHtml(reply.ts) + '">' + escapeHtml(b.label) + '</button>').join('') + '</div>';
}

/** A stream's task cards (the agent's steps), as Slack draws them above the text. */
function cardsHtml(reply) {
  if (!reply.cards || !reply.cards.length) return '';
  const icon = { pending: '○', in_progress: '◐', complete: '✓', error: '✗' };
  return '<ul class="cards" aria-label="steps of the agent">' + (reply.planTitle ? '<li class="plan">' + escapeHtml(reply.planTitle) + '</li>' : '') +
    reply.cards.map((c) => '<li class="card ' + escapeHtml(c.status) + '"><span aria-hidden="true">' + (icon[c.status] || '·') + '</span> ' + escapeHtml(c.title) + ' <small>(' + escapeHtml(c.status.replace('_', ' ')) + ')</small>' + (c.details ? '<span class="details">' + escapeHtml(c.details) + '</span>' : '') + '</li>').join('') + '</ul>';
}

/** 👍 / 👎 under an answer that carries feedback buttons; the one given last is marked. */
function feedbackHtml(reply) {
  if (!reply.feedback || reply.streaming) return '';
  // The emoji is decoration (a blank box without an emoji font); the words are the button's name, on screen and for a screen reader.
  const button = (value, emoji, words) => '<button type="button" data-feedback="' + value + '" data-ts="' + escapeHtml(reply.ts) + '" aria-label="' + words + '" aria-pressed="' + (reply.feedback.given === value) + '"' + (reply.feedback.given === value ? ' class="given"' : '') + '><span aria-hidden="true">' + emoji + '</span> ' + words + '</button>';
  return '<div class="feedback" role="group" aria-label="Rate this answer">' + button('positive', '👍', 'Good answer') + button('negative', '👎', 'Bad answer') + '</div>';
}

/** What only this person sees after they acted on the request: the thanks, and a form the app opened for them. */
function surfaceHtml(r) {
  const surface = (r.trace && r.trace.surface) || [];
  return surface.map((s) => {
    if (s.type === 'ephemeral' && r.interactedAt && s.at >= r.interactedAt) return '<div class="ephemeral">👤 only you see this: ' + escapeHtml(s.text) + '</div>';
    if (s.type !== 'view' || !(r.triggers || []).includes(s.triggerId) || (r.submitted || []).includes(s.triggerId)) return '';
    const view = s.view || {};
    const input = (view.blocks || []).find((b) => b.type === 'input') || {};
    return '<form class="feedback-form" data-trigger="' + escapeHtml(s.triggerId) + '"><strong>' + escapeHtml((view.title && view.title.text) || '') + '</strong>' +
      '<textarea rows="2" placeholder="' + escapeHtml((input.label && input.label.text) || '') + '">' + escapeHtml(drafts[s.triggerId] || '') + '</textarea>' +
      '<button type="submit">' + escapeHtml((view.submit && view.submit.text) || 'Send') + '</button></form>';
  }).join('');
}

/** The files the agent shared in the thread: name, size, and a preview of an image. */
function sharedFilesHtml(r) {
  const files = (r.trace && r.trace.shared_files) || [];
  return files.map((f) => '<div class="shared-file">📎 <a href="' + escapeHtml(f.url) + '" download="' + escapeHtml(f.name) + '">' + escapeHtml(f.name) + '</a> · ' + f.size + ' bytes' +
    (String(f.mimetype).startsWith('image/') ? '<br><img class="preview" alt="' + escapeHtml(f.name) + '" src="' + escapeHtml(f.url) + '">' : '') + '</div>').join('');
}

function render() {
  const html = requests.map((r) => {
    const [label, cls] = stateOf(r.trace);
    const replies = (r.trace && r.trace.replies) || [];
    const start = r.trace && r.trace.events.length ? r.trace.events[0].at : 0;
    const rows = r.trace ? r.trace.events.map((e) => '<tr><td class="ms">+' + (e.at - start) + ' ms</td><td>' + describe(e) + '</td></tr>').join('') : '';
    if (r.error) return '<div class="request"><div class="you">you: ' + escapeHtml(r.text) + '<span class="state failed">' + escapeHtml(r.error) + '</span></div></div>';
    return '<div class="request" data-event-id="' + r.eventId + '">' +
      '<div><div class="you">you: ' + escapeHtml(r.text) + '<span class="state ' + cls + '">' + label + '</span>' + sessionHtml(r) + '</div>' +
      (r.files && r.files.length ? '<div class="files"><span aria-hidden="true">📎</span> files: ' + r.files.map(escapeHtml).join(', ') + '</div>' : '') +
      (replies.length ? replies.map((p) => '<div class="reply' + (p.streaming ? ' streaming' : '') + '">' + cardsHtml(p) + mrkdwnHtml(p.text) + (p.streaming ? ' ▍' : '') + '</div>' + questionButtonsHtml(p) + feedbackHtml(p)).join('') : '<div class="waiting">' + (r.trace && r.trace.status ? '⏳ assistant ' + escapeHtml(r.trace.status) : 'waiting for the reply…') + '</div>') +
      sharedFilesHtml(r) +
      surfaceHtml(r) +
      (r.note ? '<div class="ephemeral">' + escapeHtml(r.note) + '</div>' : '') +
      (r.threadTs ? '<button type="button" class="link" data-thread="' + escapeHtml(r.threadTs) + '" data-channel="' + escapeHtml(r.channel || '') + '">↳ reply in thread</button>' : '') +
      '</div><div><table class="trace"><tbody>' + rows + '</tbody></table></div></div>';
  }).join('');
  // Unchanged, nothing is redrawn: a form being typed into keeps its caret.
  if (html === shown) return;
  const focused = document.activeElement && document.activeElement.closest && document.activeElement.closest('.feedback-form');
  const trigger = focused && focused.getAttribute('data-trigger');
  box.innerHTML = shown = html;
  if (trigger) {
    const again = box.querySelector('.feedback-form[data-trigger="' + trigger + '"] textarea');
    if (again) { again.focus(); again.selectionStart = again.selectionEnd = again.value.length; }
  }
}

async function refresh() {
  const answered = (r) => r.trace && r.trace.events.some((e) => e.hop === 'reply-posted');
  const open = requests.filter((r) => r.eventId && (!answered(r) || Date.now() < (r.watchUntil || 0)));
  for (const r of open) {
    const response = await fetch('/api/events/' + encodeURIComponent(r.eventId));
    if (!response.ok) continue;
    r.trace = await response.json();
    // Answered: a little longer, to see its agent session leave processing.
    if (answered(r) && !r.answeredSeen) { r.answeredSeen = true; r.stopping = false; watch(r, 3000); }
  }
  if (open.length) render();
}
setInterval(refresh, 250);

// The channels the configured agents answer in, to pick from: routing by channel, made visible.
(async () => {
  const state = await (await fetch('/api/state')).json();
  const select = document.getElementById('channel');
  const agents = state.agents || [];
  const fallback = agents.find((a) => a.default);
  if (fallback) select.options[0].textContent = '#local → ' + fallback.name;
  for (const agent of agents) {
    for (const channel of agent.channels) select.add(new Option(channel + ' → ' + agent.name, channel));
  }
  if (agents.some((a) => a.prefix)) document.getElementById('text').placeholder += ' · ' + agents.filter((a) => a.prefix).map((a) => a.prefix + ': …').join(' · ');
})().catch(() => undefined);
</script>
</body>
</html>
`;
