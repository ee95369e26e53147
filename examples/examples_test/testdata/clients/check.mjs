// Shared by the client scripts: a failed check ends the script with exit
// code 1 and says which; main runs a script and reports an exception the
// same way.
export class CheckError extends Error {}

export function check(ok, what) {
  if (!ok) throw new CheckError(what);
  console.error("ok: " + what);
}

export function main(fn) {
  fn().then(
    () => process.exit(0),
    (err) => {
      console.error("FAIL: " + (err instanceof CheckError ? err.message : (err?.stack ?? String(err))));
      process.exit(1);
    },
  );
}
