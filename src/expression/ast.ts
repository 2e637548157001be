/** The parsed form of one `${…}` expression. Every node keeps the offset of its first character. */
export type Node =
  | { readonly type: 'literal'; readonly value: string | number | boolean | null; readonly offset: number }
  | { readonly type: 'name'; readonly name: string; readonly offset: number }
  | { readonly type: 'member'; readonly object: Node; readonly key: string; readonly offset: number }
  | { readonly type: 'index'; readonly object: Node; readonly key: Node; readonly offset: number }
  | { readonly type: 'call'; readonly callee: Node; readonly args: readonly Node[]; readonly offset: number }
  | {
      readonly type: 'binary';
      readonly op: '+' | '-' | '*' | '/' | '??';
      readonly left: Node;
      readonly right: Node;
      readonly offset: number;
    }
  | { readonly type: 'list'; readonly items: readonly Node[]; readonly offset: number }
  | {
      readonly type: 'object';
      readonly entries: ReadonlyArray<readonly [string, Node, number]>;
      readonly offset: number;
    };

/** Where the text of a node begins: a path or call starts at its root, not at its last step. */
export function startOf(node: Node): number {
  if (node.type === 'member' || node.type === 'index') return startOf(node.object);
  if (node.type === 'call') return startOf(node.callee);
  if (node.type === 'binary') return startOf(node.left);
  return node.offset;
}
