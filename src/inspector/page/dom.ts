/** What `h` accepts as children: nodes, text, and nothing (skipped). */
export type Child = Node | string | number | null | undefined | false;

type Attrs = Record<string, string | number | boolean | EventListener | undefined | null>;

/**
 * Builds an element. Text always goes in as text nodes, never as HTML: request paths, headers and
 * bodies come from whoever called the mock, and must never become markup in the page.
 */
export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attrs?: Attrs | null,
  ...children: Child[]
): HTMLElementTagNameMap[K] {
  const el = document.createElement(tag);
  if (attrs) {
    for (const [name, value] of Object.entries(attrs)) {
      if (value === undefined || value === null || value === false) continue;
      if (typeof value === 'function') el.addEventListener(name.slice(2).toLowerCase(), value);
      else if (value === true) el.setAttribute(name, '');
      else el.setAttribute(name, String(value));
    }
  }
  append(el, children);
  return el;
}

/** Appends children as `h` does. */
export function append(parent: Node, children: Child[]): void {
  for (const child of children) {
    if (child === null || child === undefined || child === false) continue;
    parent.appendChild(
      typeof child === 'string' || typeof child === 'number' ? document.createTextNode(String(child)) : child,
    );
  }
}

/** The element with this id; the page's HTML defines them all, so a missing one is a bug. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const el = document.getElementById(id);
  if (el === null) throw new Error(`#${id} missing`);
  return el as T;
}

/** Copies text to the clipboard; falls back to a selected textarea where the Clipboard API is refused. */
export async function copyText(text: string): Promise<void> {
  try {
    await navigator.clipboard.writeText(text);
    return;
  } catch {
    const area = h('textarea', { 'aria-hidden': 'true', style: 'position:fixed;left:-9999px' });
    area.value = text;
    document.body.appendChild(area);
    area.select();
    document.execCommand('copy');
    area.remove();
  }
}

/** Shows a short message in the page's live region (read out by screen readers). */
export function toast(message: string): void {
  const region = byId('toast');
  region.textContent = message;
  region.classList.add('show');
  window.clearTimeout(Number(region.dataset.timer ?? 0));
  region.dataset.timer = String(window.setTimeout(() => region.classList.remove('show'), 2500));
}
