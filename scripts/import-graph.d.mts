/** An import of src/: paths under src/ (`http/handler.ts`). */
export interface ImportEdge {
  from: string;
  to: string;
}
export function unitOf(file: string): string;
export function importsOfSrc(): ImportEdge[];
export function unitGraph(edges?: ImportEdge[]): Map<string, Set<string>>;
export function cycles(graph?: Map<string, Set<string>>): string[][];
export function edgesBetween(units: string[], edges?: ImportEdge[]): ImportEdge[];
