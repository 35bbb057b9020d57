// The HTTP API of `reagent serve`: the bearer token (kept in sessionStorage, sent as an
// Authorization header, never put in a URL), JSON requests with the API's error bodies turned
// into exceptions, and a run's Server-Sent Events read with fetch streaming (EventSource cannot
// send headers).

const TOKEN_KEY = 'reagent.token';

/** The token in use, or null. */
export function token() {
  return sessionStorage.getItem(TOKEN_KEY);
}

/** Keep `value` as the token for this tab. */
export function setToken(value) {
  sessionStorage.setItem(TOKEN_KEY, value);
}

/** Forget the token. */
export function clearToken() {
  sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * Take a token from the URL fragment `#token=...` (the link `reagent serve` prints), keep it,
 * and remove it from the address bar and history. True when one was there.
 */
export function adoptTokenFromFragment() {
  const match = /^#token=([^&]+)/.exec(location.hash);
  if (!match) return false;
  setToken(decodeURIComponent(match[1]));
  history.replaceState(null, '', location.pathname + location.search + '#/');
  return true;
}

/** An error answered by the API: `status`, `code` (not_found, conflict...) and the message. */
export class ApiError extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

function headers(extra) {
  const h = { Accept: 'application/json', ...extra };
  const t = token();
  if (t) h.Authorization = `Bearer ${t}`;
  return h;
}

async function failure(response) {
  let code = 'error';
  let message = `${response.status} ${response.statusText}`;
  try {
    const body = await response.json();
    if (body && body.error) {
      code = body.error.code || code;
      message = body.error.message || message;
    }
  } catch (_) {
    // Not JSON: the status line says enough.
  }
  return new ApiError(response.status, code, message);
}

/** `method path` with an optional JSON body; resolves to the JSON answer. */
export async function call(method, path, body) {
  const init = { method, headers: headers(body === undefined ? {} : { 'Content-Type': 'application/json' }) };
  if (body !== undefined) init.body = JSON.stringify(body);
  let response;
  try {
    response = await fetch(path, init);
  } catch (e) {
    throw new ApiError(0, 'unreachable', `the server did not answer (${e.message})`);
  }
  if (!response.ok) throw await failure(response);
  const text = await response.text();
  return text ? JSON.parse(text) : null;
}

/**
 * Follow run `id`'s events after `after` (a seq): `onEvent(event)` for each, in order, with the
 * reply's text and thinking as they stream (`text_delta`, `reasoning_delta`: live only, never
 * replayed). Resolves when the server closes the stream (after `run_finished`), rejects on an
 * error or when `signal` aborts.
 */
export function followEvents(id, after, onEvent, signal) {
  return readEvents(`/v1/runs/${encodeURIComponent(id)}/events?after=${after}&deltas=true`, onEvent, signal);
}

/**
 * Follow experiment `id`'s events after `after` (a seq): `onEvent(data, name)` for each, name
 * being the log event's type (`CYCLE_START`, `LLM_INVOCATION`, `TOOL_CALL`, `CYCLE_END`),
 * `operator` (the messages waiting for an answer changed) or `end` (the last; the stream
 * closes).
 */
export function followExperiment(id, after, onEvent, signal) {
  return readEvents(`/v1/experiments/${encodeURIComponent(id)}/events?after=${after}`, onEvent, signal);
}

/** Read the Server-Sent Events of `path` (fetch streaming: EventSource cannot send headers). */
async function readEvents(path, onEvent, signal) {
  const response = await fetch(path, { headers: headers({ Accept: 'text/event-stream' }), signal });
  if (!response.ok) throw await failure(response);
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  let data = [];
  let name = 'message';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let newline;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline).replace(/\r$/, '');
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        // A blank line ends an SSE event; keep-alive comments carry no data.
        if (data.length) {
          const text = data.join('\n');
          data = [];
          try {
            onEvent(JSON.parse(text), name);
          } catch (e) {
            console.warn('unreadable event', e, text);
          }
        }
        name = 'message';
      } else if (line.startsWith('data:')) {
        data.push(line.slice(5).replace(/^ /, ''));
      } else if (line.startsWith('event:')) {
        name = line.slice(6).trim();
      }
      // `id:` repeats the event's seq; comments are ignored.
    }
  }
}
