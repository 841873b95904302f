// A small helper library served by URL in the corpus's remote_import.js.
export function pick(list, i) {
  return list[i % list.length];
}

export function between(x, lo, hi) {
  return x >= lo && x <= hi;
}
