// The seed's "Consuming the stream" example (seed 000), with the URL and
// the input taken from the command line: a plain fetch, the body split on
// blank lines, the blocks that start with "data: " parsed. It prints the
// run's text deltas on stdout and, when the stream ends in the seed's error
// event, that error's code on stderr, exiting 2. Usage:
//
//	node sse-fetch.mjs <url> <input JSON>
const [url, input] = process.argv.slice(2)

const res = await fetch(url, {
  method: 'POST',
  body: JSON.stringify({ input: JSON.parse(input) }),
})
if (res.status !== 200) {
  console.error(`status ${res.status}`)
  process.exit(1)
}
let failed = null
const reader = res.body.getReader()
const dec = new TextDecoder()
for (;;) {
  const { value, done } = await reader.read()
  if (done) break
  for (const line of dec.decode(value).split('\n\n')) {
    if (line.startsWith('data: ')) {
      const { type, payload } = JSON.parse(line.slice(6))
      if (type === 'text:delta') process.stdout.write(payload.delta)
      if (type === 'error') failed = payload
    }
  }
}
if (failed) {
  console.error(`${failed.code}: ${failed.message}`)
  process.exit(2)
}
