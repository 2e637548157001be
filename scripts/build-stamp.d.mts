export const STAMP_FILE: string;
export const OUTPUTS: string[];
export function inputStamp(root: string, nodeVersion?: string): string;
export function isUpToDate(root: string): boolean;
export function dropStamp(root: string): void;
export function writeStamp(root: string): void;
