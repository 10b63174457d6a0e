"""Headless Debian Chromium for the browser tests, driven by Playwright for Python, offline.

Playwright never downloads a browser here: it launches the system's ``chromium`` (or
``$CHROMIUM``; ``make chromium`` installs it as root with apt). Where Chromium is
missing, the browser tests skip with one line, except under ``CI=true``, where they fail.

Chromium finds no host but 127.0.0.1 and the CDN hosts the site loads its third-party
JavaScript from (MathJax, require.js, the ipywidgets HTML manager, Thebe, reveal.js;
pinned in ``_config.yml``): those resolve to a local HTTPS server that answers from the
npm copies in ``.venv/vendor`` (``make browser`` fetches them; versions in
``tests/browser/package.json``), with a certificate made for the run, which this Chromium
alone trusts. Any other host does not resolve, so its request fails. Chromium caches
what the local CDN serves, as it caches jsDelivr's files: each page of a context does not
fetch and compile MathJax again (intercepting the requests instead, with Playwright's
routes, turns Chromium's cache off: a page took about twice the CPU time).
"""

import base64
import datetime
import http.server
import json
import mimetypes
import os
import re
import shutil
import ssl
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
VENDOR = ROOT / ".venv" / "vendor"
CDN = re.compile(r"^https://cdn\.jsdelivr\.net/npm/((?:@[^/]+/)?[^/@]+)@([^/]+)/([^?#]*)")
# Other CDN folders the site's scripts load (the HTML manager adds Font Awesome 4.4),
# and the npm package@version they hold.
MIRRORS = {"https://maxcdn.bootstrapcdn.com/font-awesome/4.4.0/": "font-awesome@4.4.0/"}
CDN_HOSTS = ("cdn.jsdelivr.net", "maxcdn.bootstrapcdn.com")
CHROMIUM = os.environ.get("CHROMIUM") or shutil.which("chromium") or "/usr/bin/chromium"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
        "--disable-background-networking", "--disable-component-update", "--disable-sync"]
# Every Playwright wait and action waits for its event at most this long: generous for a
# page that loads, runs a script or animates on two cores busy with other tests (axe once
# needed over 60 s there); a wait that sees its event goes on at once, so it costs nothing
TIMEOUT_MS = 180_000


def require(condition, why):
    """Skip the calling test (fail it under CI=true) unless `condition` holds.

    Call it from a fixture, not at import: the plain unit run imports the browser test
    modules too (and deselects their tests) before ``make browser`` installs Chromium.
    """
    if condition:
        return
    if os.environ.get("CI") == "true":
        pytest.fail(f"{why} (required under CI=true)", pytrace=False)
    pytest.skip(why)


def require_chromium():
    require(Path(CHROMIUM).exists(),
            f"Chromium not found at {CHROMIUM}: run `make chromium` as root to install it")


def cdn_file(url):
    """The local copy of a CDN URL's file, and what is wrong with the URL (or None).

    The file is None where there is none to serve; a URL that asks for another version
    of a package than its local copy gets the copy's file, and a problem."""
    for prefix, package in MIRRORS.items():
        if url.startswith(prefix):
            url = "https://cdn.jsdelivr.net/npm/" + package + url[len(prefix):]
    match = CDN.match(url)
    if not match:
        return None, f"blocked request to {url}"
    name, version, path = match.groups()
    package = VENDOR / name
    if not (package / "package.json").exists():
        return None, f"no local copy of npm package {name} for {url}"
    local = json.loads((package / "package.json").read_text())["version"]
    target = package / path
    if not target.is_file():
        return None, f"{url}: {path} is not in the local copy of {name}@{local}"
    if local != version:
        return target, f"{url} asks for {name}@{version}, the local copy is {local}"
    return target, None


class LocalCDN(http.server.BaseHTTPRequestHandler):
    """Answers a CDN URL (its host in the Host header) with its local copy's file."""

    def log_message(self, *args):
        pass

    def do_GET(self):
        target, _ = cdn_file(f"https://{self.headers.get('Host', '')}{self.path}")
        if target is None:  # the page's request listener reports why
            self.send_error(404)
            return
        body = target.read_bytes()
        self.send_response(200)
        self.send_header("Content-Type", mimetypes.guess_type(target.name)[0] or "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.send_header("Access-Control-Allow-Origin", "*")
        self.send_header("Cache-Control", "public, max-age=604800, immutable")  # as jsDelivr
        self.end_headers()
        self.wfile.write(body)


def certificate(folder):
    """A self-signed certificate for the CDN hosts, with its key, in `folder`: the paths of
    both, and the SHA-256 of its public key (base64), which Chromium is told to trust."""
    from cryptography import x509
    from cryptography.hazmat.primitives import hashes, serialization
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.x509.oid import NameOID

    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, CDN_HOSTS[0])])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name)
            .public_key(key.public_key()).serial_number(x509.random_serial_number())
            .not_valid_before(now - datetime.timedelta(days=1))
            .not_valid_after(now + datetime.timedelta(days=7))
            .add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in CDN_HOSTS]),
                           critical=False)
            .sign(key, hashes.SHA256()))
    cert_path, key_path = folder / "cdn-cert.pem", folder / "cdn-key.pem"
    cert_path.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_path.write_bytes(key.private_bytes(serialization.Encoding.PEM,
                                           serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    spki = key.public_key().public_bytes(serialization.Encoding.DER,
                                         serialization.PublicFormat.SubjectPublicKeyInfo)
    digest = hashes.Hash(hashes.SHA256())
    digest.update(spki)
    return cert_path, key_path, base64.b64encode(digest.finalize()).decode()


@contextmanager
def local_cdn(folder):
    """The local CDN on 127.0.0.1 (HTTPS); yields Chromium's arguments that lead to it."""
    cert, key, pin = certificate(Path(folder))
    tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    tls.load_cert_chain(cert, key)
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), LocalCDN)
    httpd.socket = tls.wrap_socket(httpd.socket, server_side=True)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    port = httpd.server_address[1]
    rules = [f"MAP {host} 127.0.0.1:{port}" for host in CDN_HOSTS]
    try:
        yield [f"--host-resolver-rules={', '.join(rules)}, MAP * ~NOTFOUND, EXCLUDE 127.0.0.1",
               f"--ignore-certificate-errors-spki-list={pin}"]
    finally:
        httpd.shutdown()
        httpd.server_close()


@contextmanager
def launch(folder):
    """A fresh headless Chromium (Playwright gives it a new temporary profile) that sees
    only 127.0.0.1 and the local CDN, closed on exit; `folder` takes the CDN's certificate."""
    from playwright.sync_api import sync_playwright

    with local_cdn(folder) as cdn_args, sync_playwright() as playwright:
        browser = playwright.chromium.launch(
            executable_path=CHROMIUM, headless=True, args=ARGS + cdn_args, timeout=TIMEOUT_MS)
        try:
            yield browser
        finally:
            browser.close()
