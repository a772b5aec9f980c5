/**
 * The SDK puts the API key into the WebSocket URL (`?key=…`), so any error text that quotes the URL
 * carries it. Everything this adapter logs or throws goes through here first.
 */
export function redactKey(text: string, apiKey: string | undefined): string {
  let out = text.replace(/([?&](?:key|access_token)=)[^&\s'"]+/g, '$1[redacted]')
  if (apiKey && apiKey.length >= 4) out = out.split(apiKey).join('[redacted]')
  return out
}
