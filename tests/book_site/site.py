"""The built book served on loopback, and what each page showed in headless Chromium.

`SiteServer` serves the site's folder on 127.0.0.1 from a thread of this process. `visit_all`
opens every page once in one browser context whose every request to another host is refused
(and recorded), waits for the stored widgets to render, runs axe-core, takes a screenshot, and
keeps what the tests read: console errors, failed requests, images, links, headings, widgets,
the notes beside live controls, the launch buttons.
"""

import functools
import threading
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import urlsplit

from browser.axe import AXE_JS
from chromium import VIEWPORT
from playwright.sync_api import TimeoutError as PlaywrightTimeout

SCREENSHOTS = Path(__file__).resolve().parent / "screenshots"
WIDGETS_TIMEOUT_MS = 60_000
WIDGET_VIEW = "application/vnd.jupyter.widget-view+json"


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):
        pass


@dataclass
class SiteServer:
    root: Path
    server: ThreadingHTTPServer
    thread: threading.Thread

    @classmethod
    def start(cls, root: Path) -> "SiteServer":
        server = ThreadingHTTPServer(("127.0.0.1", 0),
                                     functools.partial(QuietHandler, directory=str(root)))
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        return cls(root, server, thread)

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/"

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()
        self.thread.join(timeout=10)


def pages(site: Path) -> list[str]:
    """Every page of the site: its HTML files but the theme's template fragments in _static."""
    return sorted(str(path.relative_to(site)) for path in site.rglob("*.html")
                  if "_static" not in path.relative_to(site).parts)


@dataclass
class Visit:
    page: str
    console_errors: list[str] = field(default_factory=list)
    failed_requests: list[str] = field(default_factory=list)
    blocked_requests: list[str] = field(default_factory=list)
    widgets_rendered: bool = True
    facts: dict = field(default_factory=dict)
    axe: list[dict] = field(default_factory=list)
    screenshot: Path | None = None


VIEWS = f'script[type="{WIDGET_VIEW}"]'

COLLECT = """() => {
    const article = document.querySelector('article.bd-article') || document.querySelector('main');
    const visible = el => !!(el.offsetWidth || el.offsetHeight || el.getClientRects().length);
    const views = [...document.querySelectorAll('VIEWS')].map(script => {
        const area = script.previousElementSibling;
        const rendered = !!(area && area.classList.contains('widget-subarea')
                            && area.children.length);
        const cell = script.closest('.cell');
        let next = cell ? cell.nextElementSibling : null;
        return {
            model_id: JSON.parse(script.textContent).model_id,
            rendered,
            text: rendered ? area.innerText : '',
            content: rendered ? area.textContent : '',
            selected: rendered ? [
                ...[...area.querySelectorAll('select')].flatMap(
                    s => [...s.selectedOptions].map(o => o.textContent.trim())),
                ...[...area.querySelectorAll('input[type=radio]:checked')].map(
                    i => (i.closest('label') || i.parentElement).textContent.trim()),
                ...[...area.querySelectorAll('.mod-active')].map(b => b.textContent.trim()),
            ] : [],
            readouts: rendered ? [...area.querySelectorAll('.widget-readout')].map(
                r => r.textContent.trim()) : [],
            inputs: rendered ? [...area.querySelectorAll('input, textarea')].filter(
                i => !['radio', 'checkbox', 'range'].includes(i.type)).map(i => i.value) : [],
            images: rendered ? area.querySelectorAll('img').length : 0,
            note: next && next.classList.contains('trafikey-live-note')
                ? {text: next.innerText, links: [...next.querySelectorAll('a')].map(a => a.href)}
                : null,
        };
    });
    const cells = [...document.querySelectorAll('.cell')].map(cell => {
        const next = cell.nextElementSibling;
        return {
            source: (cell.querySelector('.cell_input pre') || {textContent: ''}).textContent,
            widget: !!cell.querySelector('VIEWS'),
            note: next && next.classList.contains('trafikey-live-note')
                ? {text: next.innerText, links: [...next.querySelectorAll('a')].map(a => a.href),
                   kind: [...next.classList].join(' ')}
                : null,
        };
    });
    const launch = [...document.querySelectorAll('.dropdown-launch-buttons a')].map(
        a => ({text: a.textContent.trim(), href: a.href}));
    return {
        title: document.title,
        body_text: document.body.innerText,
        html: document.documentElement.outerHTML,
        images: [...document.querySelectorAll('img')].map(img => ({
            src: (img.getAttribute('src') || '').slice(0, 100),
            alt: img.getAttribute('alt'),
            loaded: img.complete && img.naturalWidth > 0,
            visible: visible(img),
            in_article: !!(article && article.contains(img)),
        })),
        links: [...document.querySelectorAll('a[href], link[href]')].map(a => ({
            href: a.href, raw: a.getAttribute('href'), text: a.textContent.trim().slice(0, 60),
        })),
        ids: [...document.querySelectorAll('[id]')].map(el => el.id),
        headings: article ? [...article.querySelectorAll('h1, h2, h3, h4, h5, h6')].map(
            h => ({level: Number(h.tagName[1]), text: h.textContent.trim().slice(0, 80)})) : [],
        views,
        cells,
        launch,
        toc: [...document.querySelectorAll('nav.bd-links a.reference')].map(
            a => ({text: a.textContent.trim(), href: a.href})),
    };
}""".replace("'VIEWS'", repr(VIEWS))

WIDGETS_DONE = """() => [...document.querySelectorAll('VIEWS')].every(script => {
    const area = script.previousElementSibling;
    return area && area.classList.contains('widget-subarea') && area.children.length;
})""".replace("'VIEWS'", repr(VIEWS))

AXE = """async () => {
    const result = await window.axe.run(document, {resultTypes: ['violations']});
    return result.violations.flatMap(v => v.nodes.map(n => {
        const node = document.querySelector(n.target[0]);
        const article = document.querySelector('article.bd-article');
        return {rule: v.id, impact: v.impact, target: n.target.join(' '),
                html: n.html.slice(0, 200),
                in_article: Boolean(node && article && article.contains(node))};
    }));
}"""


def visit_all(browser, served: SiteServer, site: Path) -> dict[str, Visit]:
    SCREENSHOTS.mkdir(exist_ok=True)
    context = browser.new_context(viewport=VIEWPORT)
    context.set_default_timeout(WIDGETS_TIMEOUT_MS)
    visits: dict[str, Visit] = {}
    current: list[Visit] = []
    listening: list[bool] = []
    own = urlsplit(served.base).netloc

    def route(route_):
        url = route_.request.url
        if urlsplit(url).netloc == own or url.startswith(("data:", "blob:", "about:")):
            route_.continue_()
        else:
            if current:
                current[0].blocked_requests.append(url)
            route_.abort()

    context.route("**/*", route)
    try:
        for name in pages(site):
            visit = Visit(name)
            current[:] = [visit]
            page = context.new_page()
            listening[:] = [True]

            def record(into: list[str], what: str) -> None:
                if listening:
                    into.append(what)

            page.on("console", lambda message, visit=visit: record(
                visit.console_errors, message.text) if message.type == "error" else None)
            page.on("pageerror", lambda error, visit=visit: record(
                visit.console_errors, f"uncaught: {error}"))
            page.on("requestfailed", lambda request, visit=visit: record(
                visit.failed_requests, f"{request.url} ({request.failure})"))
            page.on("response", lambda response, visit=visit: record(
                visit.failed_requests, f"{response.url} (HTTP {response.status})")
                if response.status >= 400 else None)
            page.goto(served.base + name, wait_until="load")
            try:
                page.wait_for_function(WIDGETS_DONE, timeout=WIDGETS_TIMEOUT_MS)
            except PlaywrightTimeout:
                visit.widgets_rendered = False
            page.wait_for_load_state("networkidle")
            visit.facts = page.evaluate(COLLECT)
            # What the page itself asked for ends here: axe-core fetches the stylesheets
            # again to read them, resolving their @imports against the page, not the sheet.
            current.clear()
            listening.clear()
            page.add_script_tag(content=AXE_JS.read_text())
            visit.axe = page.evaluate(AXE)
            visit.screenshot = SCREENSHOTS / (name.replace("/", "__").removesuffix(".html")
                                              + ".png")
            page.screenshot(path=str(visit.screenshot), full_page=True)
            page.close()
            visits[name] = visit
    finally:
        context.close()
    return visits
