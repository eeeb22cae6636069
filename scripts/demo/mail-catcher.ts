// A local SMTP server that keeps every mail the approval service sends, so no mail is lost when no real
// email server is configured, and a small web page to read them (`viewerUrl`): the demo and `npm start` print it,
// so a newcomer reads the approval email as the approver would and clicks its link. The demo also prints each
// request's approval links from it.
import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { simpleParser } from 'mailparser';
import { SMTPServer } from 'smtp-server';

export interface CaughtMail {
  to: string[];
  subject: string;
  /** Raw message with quoted-printable soft breaks and escapes decoded. */
  text: string;
  /** The HTML part, as the approver's mail client shows it (undefined for a text-only mail). */
  html?: string;
  receivedAt: Date;
}

export class MailCatcher {
  readonly mails: CaughtMail[] = [];
  private server?: SMTPServer;
  private viewer?: Server;
  /** Where the mails can be read in a browser (after start()). */
  viewerUrl = '';

  /** `onMail` is told of each mail as it arrives (e.g. to print its link). */
  constructor(private readonly onMail?: (mail: CaughtMail) => void) {}

  /** Returns the SMTP_URL to give the approval service. */
  async start(): Promise<string> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onData: (stream, session, callback) => {
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
        stream.on('end', () => {
          const text = decodeQuotedPrintable(raw);
          void simpleParser(raw)
            .then((parsed) => (parsed.html === false ? undefined : parsed.html))
            .catch(() => undefined)
            .then((html) => {
              const mail: CaughtMail = {
                to: session.envelope.rcptTo.map((r) => r.address),
                subject: /^Subject: (.*)$/m.exec(text)?.[1]?.trim() ?? '(no subject)',
                text,
                html,
                receivedAt: new Date(),
              };
              this.mails.push(mail);
              this.onMail?.(mail);
              callback();
            });
        });
      },
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.viewer = createServer((req, res) => this.serve(req.url ?? '/', res));
    await new Promise<void>((resolve) => this.viewer!.listen(0, '127.0.0.1', resolve));
    this.viewerUrl = `http://127.0.0.1:${(this.viewer.address() as AddressInfo).port}/`;
    return `smtp://127.0.0.1:${(this.server!.server.address() as AddressInfo).port}`;
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.viewer ? this.viewer.close(() => resolve()) : resolve()));
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** `/`: every mail, newest first; `/mail/<n>`: mail n as the approver sees it (its HTML part, else its text). */
  private serve(url: string, res: ServerResponse): void {
    const page = (status: number, html: string) => {
      // The mails are the approval service's own; still, no script of theirs runs here.
      res.writeHead(status, {
        'content-type': 'text/html; charset=utf-8',
        'content-security-policy': "script-src 'none'; object-src 'none'",
      });
      res.end(html);
    };
    const one = /^\/mail\/(\d+)$/.exec(url);
    if (one) {
      const mail = this.mails[Number(one[1]) - 1];
      if (!mail) return page(404, '<p>No such mail. <a href="/">All mails</a></p>');
      const head = `<p><a href="/">← all mails</a> · to ${escapeHtml(mail.to.join(', '))} · ${escapeHtml(mail.subject)}</p><hr>`;
      return page(200, head + (mail.html ?? `<pre>${escapeHtml(mail.text)}</pre>`));
    }
    if (url !== '/') return page(404, '<p>Not found. <a href="/">All mails</a></p>');
    const rows = this.mails
      .map((mail, i) => ({ mail, n: i + 1 }))
      .reverse()
      .map(
        ({ mail, n }) =>
          `<li><a href="/mail/${n}">${escapeHtml(mail.subject)}</a> — to ${escapeHtml(mail.to.join(', '))}, ${mail.receivedAt.toISOString()}</li>`,
      )
      .join('\n');
    page(
      200,
      `<!doctype html><title>Countersign: caught mail</title><h1>Mail the local catcher took (${this.mails.length})</h1>` +
        (rows ? `<ul>${rows}</ul>` : '<p>None yet.</p>'),
    );
  }

  /** Mails to `address` whose text contains `needle`. */
  to(address: string, needle = ''): CaughtMail[] {
    return this.mails.filter((m) => m.to.includes(address) && m.text.includes(needle));
  }

  /** Approval links (to `/approve/<token>`) whose token is bound to `callId`, with their recipient. */
  linksFor(callId: string): { to: string; link: string }[] {
    const found: { to: string; link: string }[] = [];
    for (const mail of this.mails) {
      const link = approvalLink(mail);
      if (link && tokenCallId(link) === callId) found.push({ to: mail.to.join(', '), link });
    }
    return found;
  }
}

/** The mail's approval link (to `/approve/<token>`), if it has one. */
export function approvalLink(mail: CaughtMail): string | undefined {
  return /https?:\/\/[^\s"<>]+\/approve\/[A-Za-z0-9_.-]+/.exec(mail.text)?.[0];
}

/** The link token's payload is readable base64url JSON (`c` = call ID); only its signature is secret. */
function tokenCallId(link: string): string | undefined {
  try {
    const payload = link.split('/approve/')[1].split('.')[0];
    return (JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as { c?: string }).c;
  } catch {
    return undefined;
  }
}

function decodeQuotedPrintable(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}
