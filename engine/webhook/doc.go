// Package webhook delivers signed JSON notifications to URLs a client
// named: a Sender checks a target (an http or https URL whose host the
// policy allows, never a loopback, private or link-local address unless
// allowed), signs each body with an HMAC the receiver verifies (Sign,
// Verify), retries a 5xx, a 429 or a failed connection with a doubling
// wait, and dials through a guard that checks every address after DNS, so
// a name that resolves to 127.0.0.1 or 169.254.169.254 is refused as surely
// as the literal.
//
// It is for code that calls a URL it did not choose: the engine's
// background-run webhooks, a protocol's push notifications (A2A). A
// program that only receives webhooks needs Verify and SignatureHeader. It
// depends on package core alone, never on the engine.
package webhook
