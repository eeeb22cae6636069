// A real local SMTP server (smtp-server, as SmtpCapture) that keeps every mail it takes and can be told to fail
// the next mail to an address, once: refuse the recipient with a temporary failure (451: nothing was taken), or
// take the whole message and drop the connection before answering (the sender cannot know it was taken).
import type { AddressInfo, Socket } from 'node:net';
import { SMTPServer } from 'smtp-server';

export interface FaultyMail {
  to: string[];
  /** Raw message with quoted-printable soft breaks and escapes decoded. */
  text: string;
}

type Fault = 'refuse' | 'hang-up';

export class FaultySmtp {
  readonly mails: FaultyMail[] = [];
  /** Mails received but never answered (hang-ups): the sender does not know they arrived. */
  readonly unanswered: FaultyMail[] = [];
  private readonly faults = new Map<string, Fault>();
  private server?: SMTPServer;
  /** Client sockets by remote port, to hang up on a session (smtp-server does not hand out its socket). */
  private readonly sockets = new Map<number, Socket>();

  /** The next mail to `address` fails as `fault`; the ones after it go through. */
  failNext(address: string, fault: Fault): void {
    this.faults.set(address, fault);
  }

  /** Returns the SMTP_URL to give the approval service. */
  async start(): Promise<string> {
    this.server = new SMTPServer({
      authOptional: true,
      disabledCommands: ['STARTTLS'],
      logger: false,
      onRcptTo: (address, _session, callback) => {
        if (this.faults.get(address.address) !== 'refuse') return callback();
        this.faults.delete(address.address);
        callback(Object.assign(new Error('try again later'), { responseCode: 451 }));
      },
      onData: (stream, session, callback) => {
        let raw = '';
        stream.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
        stream.on('end', () => {
          const mail = { to: session.envelope.rcptTo.map((r) => r.address), text: decode(raw) };
          const hangUp = mail.to.find((to) => this.faults.get(to) === 'hang-up');
          if (hangUp === undefined) {
            this.mails.push(mail);
            return callback();
          }
          this.faults.delete(hangUp);
          this.unanswered.push(mail);
          this.sockets.get(session.remotePort)?.destroy();
        });
      },
    });
    this.server.server.on('connection', (socket: Socket) => {
      const port = socket.remotePort!;
      this.sockets.set(port, socket);
      socket.on('close', () => this.sockets.delete(port));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    return `smtp://127.0.0.1:${(this.server!.server.address() as AddressInfo).port}`;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Mails to `address` whose text contains `needle`, answered or not. */
  to(address: string, needle = ''): FaultyMail[] {
    return [...this.mails, ...this.unanswered].filter(
      (m) => m.to.includes(address) && m.text.includes(needle),
    );
  }
}

function decode(raw: string): string {
  return raw
    .replace(/=\r?\n/g, '')
    .replace(/=([0-9A-F]{2})/g, (_m, hex: string) => String.fromCharCode(parseInt(hex, 16)));
}
