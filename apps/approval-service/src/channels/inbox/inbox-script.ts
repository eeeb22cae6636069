// The inbox pages' only script (inline, under the page's CSP nonce). It posts what the approver chose and swaps in the
// HTML fragments the server rendered; it never builds markup itself. After a click the card stays for a few seconds
// with the outcome and what happens next (the server's words), even while live updates refresh the list around it.

/** How long a card stays, showing its outcome, after the approver acted on it. */
export const HOLD_MS = 6_000;

export const INBOX_SCRIPT = `
(function () {
  // Sign out: a change like any other (session cookie and the X-Countersign-Inbox header); then the sign-in page.
  var signOut = document.getElementById('sign-out');
  if (signOut) signOut.addEventListener('click', function () {
    signOut.disabled = true;
    fetch('/inbox/sign-out', { method: 'POST', credentials: 'same-origin', headers: { 'X-Countersign-Inbox': '1' } })
      .then(function () { location.href = '/inbox'; }, function () { signOut.disabled = false; });
  });
  var items = document.getElementById('items');
  var live = document.getElementById('live');
  if (!items) return;
  var source = items.getAttribute('data-refresh');
  var held = [];
  var HOLD_MS = ${HOLD_MS};

  function refresh() {
    return fetch(source, { credentials: 'same-origin' }).then(function (r) {
      if (r.status === 401) { location.reload(); return; }
      return r.text().then(function (html) {
        items.innerHTML = html;
        restoreHeld();
      });
    });
  }

  // A card the approver just acted on stays where it was, with its outcome, until its time is up.
  function restoreHeld() {
    var now = Date.now();
    held = held.filter(function (h) { return h.until > now; });
    held.forEach(function (h) {
      var fresh = items.querySelector('[data-request-id="' + h.id + '"]');
      if (fresh) fresh.remove();
      var template = document.createElement('template');
      template.innerHTML = h.html;
      var node = template.content.firstElementChild;
      var empty = document.getElementById('empty');
      if (empty) empty.remove();
      items.insertBefore(node, items.children[h.index] || null);
    });
  }

  function hold(card, text, ok) {
    card.classList.add(ok ? 'settled' : 'refused');
    card.querySelectorAll('.actions, form.edit, form.respond, .trust button').forEach(function (el) { el.remove(); });
    var outcome = document.createElement('p');
    outcome.className = 'after-click';
    outcome.setAttribute('role', 'status');
    outcome.textContent = text;
    card.appendChild(outcome);
    var index = Array.prototype.indexOf.call(items.children, card);
    held.push({ id: card.getAttribute('data-request-id'), html: card.outerHTML, index: index, until: Date.now() + HOLD_MS });
    setTimeout(refresh, HOLD_MS + 50);
  }

  function send(method, url, body) {
    return fetch(url, {
      method: method, credentials: 'same-origin',
      headers: { 'Content-Type': 'application/json', 'X-Countersign-Inbox': '1' },
      body: body === undefined ? undefined : JSON.stringify(body)
    }).then(function (r) {
      return r.json().then(function (json) { return { ok: r.ok, status: r.status, json: json }; },
        function () { return { ok: r.ok, status: r.status, json: {} }; });
    });
  }

  function disable(card, yes) {
    card.querySelectorAll('button, input, textarea, select').forEach(function (el) { el.disabled = yes; });
  }

  function decide(card, body) {
    var reason = card.querySelector('.reason');
    if (body.decision !== 'respond' && reason && reason.value.trim()) body.reason = reason.value.trim();
    body.fingerprint = card.getAttribute('data-fp');
    var result = card.querySelector('.result');
    disable(card, true);
    send('POST', '/approvals/' + encodeURIComponent(card.getAttribute('data-request-id')) + '/decisions', body)
      .then(function (reply) {
        if (reply.ok) return hold(card, reply.json.next || 'Done.', true);
        disable(card, false);
        if (result) result.textContent = ' ' + (reply.json.message || 'Refused (' + reply.status + ').');
        if (reply.status === 409 || reply.status === 410) setTimeout(refresh, 2500);
      })
      .catch(function () { disable(card, false); if (result) result.textContent = ' Network error; try again.'; });
  }

  // The edited arguments, typed as the tool's schema says; throws with the field's name when one is not valid.
  function editedArgs(form) {
    var args = {};
    form.querySelectorAll('[data-field]').forEach(function (el) {
      var name = el.getAttribute('data-field');
      var type = el.getAttribute('data-type');
      if (type === 'boolean') { args[name] = el.checked; return; }
      var text = el.value;
      if (text.trim() === '' && !el.required && type !== 'string') return;
      if (text === '' && !el.required) return;
      if (type === 'integer' || type === 'number') {
        var n = Number(text);
        if (text.trim() === '' || !isFinite(n)) throw new Error(name + ': must be a number');
        args[name] = n;
      } else if (type === 'json' || type === 'json-all') {
        try { var value = JSON.parse(text); } catch (e) { throw new Error((name || 'arguments') + ': not valid JSON'); }
        if (type === 'json-all') { args = value; } else { args[name] = value; }
      } else {
        args[name] = text;
      }
    });
    return args;
  }

  items.addEventListener('click', function (event) {
    var target = event.target.closest('button');
    if (!target || (target.type === 'submit' && target.closest('form'))) return;
    var card = target.closest('section');
    if (target.hasAttribute('data-decision')) return decide(card, { decision: target.getAttribute('data-decision') });
    if (target.classList.contains('edit-toggle') || target.classList.contains('respond-toggle')) {
      var form = card.querySelector(target.classList.contains('edit-toggle') ? 'form.edit' : 'form.respond');
      if (!form) return;
      form.hidden = !form.hidden;
      target.setAttribute('aria-expanded', String(!form.hidden));
      var first = form.querySelector('textarea');
      if (!form.hidden && first) first.focus();
      return;
    }
    if (target.hasAttribute('data-done')) {
      var note = card.querySelector('.note');
      var body = note && note.value.trim() ? { note: note.value.trim() } : {};
      disable(card, true);
      return send('POST', '/approvals/' + encodeURIComponent(target.getAttribute('data-done')) + '/done', body)
        .then(function (reply) {
          if (reply.ok) return hold(card, reply.json.next, true);
          disable(card, false);
          card.querySelector('.result').textContent = ' ' + (reply.json.message || 'Refused.');
        });
    }
    if (target.classList.contains('make-rule')) {
      var out = card.querySelector('.rule-result');
      target.disabled = true;
      return send('POST', '/standing-rules', { fromCallId: target.getAttribute('data-request') }).then(function (reply) {
        out.textContent = reply.ok
          ? ' Standing rule ' + reply.json.id + ' made: ' + reply.json.requester + '’s ' + reply.json.tool +
            ' calls are approved by policy until ' + new Date(reply.json.expiresAt).toLocaleString() + '. Revoke it under Rules.'
          : ' ' + (reply.json.message || 'Refused.');
        if (!reply.ok) target.disabled = false;
      });
    }
    if (target.hasAttribute('data-revoke')) {
      disable(card, true);
      return send('DELETE', '/standing-rules/' + encodeURIComponent(target.getAttribute('data-revoke')))
        .then(function (reply) {
          if (reply.ok) {
            card.classList.add('settled');
            card.querySelector('.result').textContent = ' Revoked: the next matching call asks a person again.';
            return setTimeout(refresh, HOLD_MS);
          }
          disable(card, false);
          card.querySelector('.result').textContent = ' ' + (reply.json.message || 'Refused.');
        });
    }
  });

  items.addEventListener('submit', function (event) {
    event.preventDefault();
    var form = event.target;
    var card = form.closest('section') || form;
    if (form.classList.contains('edit')) {
      var result = card.querySelector('.result');
      try {
        return decide(card, { decision: 'approve', args: editedArgs(form) });
      } catch (error) {
        if (result) result.textContent = ' ' + error.message;
        return;
      }
    }
    if (form.classList.contains('respond')) {
      return decide(card, { decision: 'respond', response: form.querySelector('.response').value });
    }
    if (form.classList.contains('new-rule')) {
      var body = { tool: form.tool.value.trim(), requester: form.requester.value.trim(), expiresIn: form.expiresIn.value };
      if (form.note.value.trim()) body.note = form.note.value.trim();
      var lines = form.args.value.split('\\n').map(function (l) { return l.trim(); }).filter(Boolean);
      if (lines.length) {
        body.args = {};
        lines.forEach(function (line) {
          var at = line.indexOf('=');
          if (at > 0) body.args[line.slice(0, at).trim()] = line.slice(at + 1).trim();
        });
      }
      var out = form.querySelector('.result');
      send('POST', '/standing-rules', body).then(function (reply) {
        out.textContent = reply.ok ? ' Created ' + reply.json.id + '.' : ' ' + (reply.json.message || 'Refused.');
        if (reply.ok) setTimeout(refresh, 1500);
      });
    }
  });

  var events = new EventSource('/inbox/events');
  events.addEventListener('open', function () { if (live) live.textContent = '● live'; });
  events.addEventListener('error', function () { if (live) live.textContent = '○ reconnecting'; });
  events.addEventListener('change', function () { refresh(); });
})();
`;
