/** Data for the command model's loops (../model.ts). Data, not code. */

/** Conditions that never turn: `while :`, `while true`, `while [ 1 ]`, `while ((1))`, `until false`. */
export const ENDLESS_CONDITION = {
  while: /^(:|true|\[\s*1\s*\]|\(\(\s*1\s*\)\))$/,
  until: /^false$/,
};
