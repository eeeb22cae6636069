// Small helpers for the server-rendered pages (email confirmation, inbox). Everything shown is escaped.
import type { HttpResponse as Response } from './http-types';

export function escapeHtml(value: unknown): string {
  return String(value)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

export const STYLE = `
body{font:15px/1.45 system-ui,sans-serif;margin:0;background:#f5f6f8;color:#1d2330}
main{max-width:860px;margin:0 auto;padding:24px}
h1{font-size:22px;margin:0 0 16px}
.card{background:#fff;border:1px solid #d9dde5;border-radius:8px;padding:16px 18px;margin:0 0 14px;overflow-wrap:anywhere;min-width:0}
.meta{color:#5b6476;font-size:13px;margin:4px 0 10px}
pre{background:#0f1624;color:#e6edf7;padding:12px;border-radius:6px;overflow:auto;font-size:13px;max-width:100%;box-sizing:border-box}
pre.args{white-space:pre-wrap;overflow-wrap:anywhere;max-height:24em}
button{font:inherit;padding:7px 16px;border-radius:6px;border:1px solid transparent;cursor:pointer;margin-right:8px}
.approve{background:#1f883d;color:#fff}.deny{background:#cf222e;color:#fff}
input[type=text],input[type=password],input[type=number],select{font:inherit;padding:6px 8px;border:1px solid #c4c9d4;border-radius:6px;width:280px;box-sizing:border-box}
.notice{border-left:4px solid #bf8700}.trust{color:#7a5b00;font-size:13px}.muted{color:#5b6476}
.outcome{font-weight:600}
.secondary{background:#eef1f6;color:#1d2330;border-color:#c4c9d4}
dl.context{display:grid;grid-template-columns:max-content minmax(0,1fr);gap:3px 12px;margin:8px 0;font-size:14px}
dl.context dt{color:#5b6476}dl.context dd{margin:0}
dd.preview{font-weight:600;color:#0b5cad}
.edited{background:#fff8e1;border-left:3px solid #bf8700;padding:6px 10px;font-size:13px}
.reason-row{margin-top:8px}.reason-row input{width:100%;max-width:520px}
form.edit{border-top:1px dashed #c4c9d4;margin-top:10px;padding-top:10px}
label.field{display:block;margin:0 0 8px}label.field input,label.field select,label.field textarea{display:block;margin-top:3px}
textarea{font:13px ui-monospace,monospace;width:100%;max-width:560px;box-sizing:border-box}
.settled{border-color:#1f883d;box-shadow:0 0 0 2px #1f883d33}.refused{border-color:#cf222e}
.after-click{font-weight:600;margin:10px 0 0}
nav.views{margin:-6px 0 14px;font-size:14px}.badge{background:#e7f0fb;color:#0b5cad;border-radius:4px;padding:1px 6px}
.history.denied h2{color:#a0111f}.result-line{font-size:13px;margin:6px 0 0}
header.who{display:flex;justify-content:flex-end;align-items:center;gap:8px;font-size:13px;margin:0 0 8px}header.who button{padding:3px 10px;margin:0}`;

export function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>${escapeHtml(title)}</title><style>${STYLE}</style></head><body><main>${body}</main></body></html>`;
}

/**
 * Sends a page with headers that keep it out of frames and keep tokens in URLs out of Referer headers to other sites.
 * `same-origin`, not `no-referrer`: under no-referrer a browser sends `Origin: null` with the page's own form posts,
 * and the inbox's sign-in checks Origin (a null origin is refused: a sandboxed frame on any site sends it too).
 */
export function sendPage(res: Response, status: number, html: string, nonce?: string): void {
  const script = nonce ? `script-src 'nonce-${nonce}'; connect-src 'self';` : '';
  res
    .status(status)
    .set({
      'Content-Type': 'text/html; charset=utf-8',
      'Content-Security-Policy': `default-src 'none'; style-src 'unsafe-inline'; img-src 'self'; form-action 'self'; frame-ancestors 'none'; ${script}`,
      'X-Frame-Options': 'DENY',
      'Referrer-Policy': 'same-origin',
      'Cache-Control': 'no-store',
      'X-Content-Type-Options': 'nosniff',
    })
    .send(html);
}

export function relativeAge(fromMs: number, now = Date.now()): string {
  const seconds = Math.round((now - fromMs) / 1000);
  if (Math.abs(seconds) < 60) return `${Math.abs(seconds)}s`;
  const minutes = Math.round(Math.abs(seconds) / 60);
  if (minutes < 120) return `${minutes} min`;
  return `${Math.round(minutes / 60)} h`;
}
