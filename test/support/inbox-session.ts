// Signing in to the web inbox as a browser does: the sign-in page gives a CSRF cookie and the same token in its form;
// the form posts the API token (never in an address) and gets the session cookie back.
export interface InboxSignIn {
  status: number;
  /** `countersign_inbox=…`, ready for a Cookie header, when the sign-in worked. */
  session?: string;
  setCookie: string;
  /** The page the sign-in answered with (a refusal says why on it). */
  page: string;
}

/** The CSRF cookie and form token of a fresh sign-in page. */
export async function signInForm(baseUrl: string): Promise<{ csrfCookie: string; csrf: string }> {
  const page = await fetch(`${baseUrl}/inbox`);
  const csrfCookie = (page.headers.get('set-cookie') ?? '').split(';')[0];
  const csrf = /name="csrf" value="([^"]+)"/.exec(await page.text())?.[1];
  if (!csrfCookie.startsWith('countersign_csrf=') || !csrf)
    throw new Error('the sign-in page has no CSRF token');
  return { csrfCookie, csrf };
}

export async function signInToInbox(
  baseUrl: string,
  credential: { token: string } | { code: string },
  headers: Record<string, string> = {},
): Promise<InboxSignIn> {
  const { csrfCookie, csrf } = await signInForm(baseUrl);
  const response = await fetch(`${baseUrl}/inbox/session`, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'Content-Type': 'application/x-www-form-urlencoded',
      Cookie: csrfCookie,
      Origin: new URL(baseUrl).origin,
      'Sec-Fetch-Site': 'same-origin',
      ...headers,
    },
    body: new URLSearchParams({ ...credential, csrf }).toString(),
  });
  const setCookie = response.headers.get('set-cookie') ?? '';
  const session = /countersign_inbox=[^;]+/.exec(setCookie)?.[0];
  return { status: response.status, session, setCookie, page: await response.text() };
}
