/*
 * How the console writes values: times in the viewer's time zone (each a <time> carrying its UTC
 * instant, shown on hover), durations, and table cells. Every value is written as text, never as markup.
 */
export const $ = (id) => document.getElementById(id);

const pad = (n, width = 2) => String(n).padStart(width, "0");

/** "HH:MM" or "HH:MM:SS" (with `.mmm` when asked) of an instant, in the viewer's time zone. */
export function clockTime(ms, { seconds = false, millis = false } = {}) {
  const d = new Date(ms);
  let text = `${pad(d.getHours())}:${pad(d.getMinutes())}`;
  if (seconds || millis) text += `:${pad(d.getSeconds())}`;
  if (millis) text += `.${pad(d.getMilliseconds(), 3)}`;
  return text;
}

/** The viewer's date of an instant, YYYY-MM-DD. */
export function localDate(ms) {
  const d = new Date(ms);
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}`;
}

/** The time as the console shows it: the clock time, with the date when it is not today's. */
export function localTime(ms, now = Date.now(), options = { seconds: true }) {
  const clock = clockTime(ms, options);
  return localDate(ms) === localDate(now) ? clock : `${localDate(ms)} ${clock}`;
}

/** The viewer's time zone as the header names it: its name and its offset from UTC now. */
export function zoneName() {
  const name = Intl.DateTimeFormat().resolvedOptions().timeZone || "local time";
  const offset = -new Date().getTimezoneOffset();
  const sign = offset < 0 ? "−" : "+";
  const abs = Math.abs(offset);
  return `${name} (UTC${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)})`;
}

/** The instant's UTC form, as a title says it. */
export function utcTitle(ms) {
  return `${new Date(ms).toISOString()} UTC`;
}

/** A <time> element: the instant in the viewer's zone, its UTC form on hover and in `datetime`. */
export function timeElement(iso, options) {
  const element = document.createElement("time");
  if (iso === null || iso === undefined) return element;
  const ms = typeof iso === "number" ? iso : Date.parse(iso);
  element.dateTime = new Date(ms).toISOString();
  element.title = utcTitle(ms);
  element.textContent = localTime(ms, Date.now(), options);
  return element;
}

/** A node list of text and <time> elements: strings stay text, `{ at }` becomes a time. */
export function phrase(...parts) {
  return parts.map((part) =>
    typeof part === "string" ? document.createTextNode(part) : timeElement(part.at, part.options),
  );
}

/** "42s", "3m 5s", "2h 10m": how long, to the second. */
export function age(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  if (s >= 3600) return `${Math.floor(s / 3600)}h ${Math.floor((s % 3600) / 60)}m`;
  return s >= 60 ? `${Math.floor(s / 60)}m ${s % 60}s` : `${s}s`;
}

/** A table cell with text (or with the nodes given), added to the row. */
export function cell(row, content) {
  const td = document.createElement("td");
  if (Array.isArray(content)) td.append(...content);
  else if (content instanceof Node) td.append(content);
  else td.textContent = content;
  row.appendChild(td);
  return td;
}
