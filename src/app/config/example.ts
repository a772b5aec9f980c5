/**
 * What `nocturn config --example` prints: every setting with a comment. Comments are allowed in
 * the real file too, so this text is a working config once the placeholders are replaced (a test
 * keeps it valid).
 */
export const EXAMPLE_CONFIG = `// /etc/nocturn/config.json — Nocturn's configuration. Comments like this one are allowed.
// Check it with: nocturn config --check --config /etc/nocturn/config.json
{
  // One provider, or a list in order of preference: [ { "kind": "gemini", … }, { "kind": "openai" } ]
  // — each session opens on the first that can be reached and stays on it (docs/voice-driver.md,
  // "Failover").
  "provider": {
    // Who answers: "gemini" (a provider without "kind" is Gemini) or "openai" (OpenAI Realtime,
    // with its own models and its own key, OPENAI_API_KEY: see docs/openai.md).
    "kind": "gemini",
    // The live speech-to-speech model, the model for typed chats from a phone, and the
    // text-to-speech model announcements are said with.
    "model": "gemini-3.8-live",
    "textModel": "gemini-2.5-flash",
    "speechModel": "gemini-3.8-flash-lite-tts",
    // The API key: better not here. Nocturn reads, in order: GEMINI_API_KEY, GEMINI_API_KEY_FILE,
    // the credential "gemini-api-key" (the installer's /etc/nocturn/credentials/gemini-api-key,
    // handed to the service by LoadCredential=), then "apiKey" or a file of your own:
    // "apiKeyFile": "/etc/nocturn/gemini-api-key",
    "baseUrl": "https://generativelanguage.googleapis.com"
  },
  "audio": {
    // alsa (arecord/aplay), portaudio, or wav (files, for testing).
    "backend": "alsa",
    // Named PCMs from /etc/asound.conf (see hardware/asound.conf.example).
    "capturePcm": "voice_in",
    "playbackPcm": "voice_out",
    // gate: the microphone sends silence while the speaker talks, plus tailMs.
    // aec: the capture PCM is already echo-cancelled; barge-in by voice works.
    "echo": "gate",
    "tailMs": 300
  },
  // What opens a session (docs/wake-word.md). "wake": only the wake phrase (or the button held a
  // second and let go), and nothing leaves the room before it; "button": press to talk; "speech":
  // any speech near the speaker is streamed.
  "listen": {
    "mode": "wake",
    "wake": {
      // The wake phrase is the household's choice; "nocturn wake list" names the pretrained ones and
      // "sudo nocturn wake install hey_jarvis" puts one in modelDir (the installer does this one).
      // LICENCE: openWakeWord's pretrained models are CC BY-NC-SA 4.0 — private, non-commercial
      // use only. For anything else, train your own head and give its path, e.g.
      // { "model": "/var/lib/nocturn/wake/hey_nocturn.onnx" }.
      "models": [{ "model": "hey_jarvis" }],
      "modelDir": "/var/lib/nocturn/wake",
      // Higher: fewer false wakes, more missed ones; consecutive 80 ms chunks must reach it.
      "threshold": 0.5,
      "consecutive": 2
    },
    // The second opinion: the session stays silent until the model's own transcription of what
    // it heard has the wake phrase; if not within withinMs, it closes without a word.
    "confirm": { "enabled": true, "withinMs": 1500 }
  },
  "panel": {
    // gpiod (libgpiod tools; kernels 6.6+ and Pi 5), rpi-gpio (sysfs, older kernels),
    // terminal (a key mutes, the LED is a status line), or none. "nocturn doctor" says which.
    "backend": "gpiod",
    // respeaker-2mic (button GPIO17), aiy-voice-hat (button GPIO23, LED GPIO25), or custom.
    "preset": "respeaker-2mic",
    // Lines by name; these override the preset. The ReSpeaker's own three LEDs (APA102, on
    // SPI) show the state once SPI is on (dtparam=spi=on; "rgbLeds": { "brightness": 0–31 }
    // dims them). "led" adds a plain LED on a GPIO line (hardware/wiring.md): drop it if none.
    "led": "GPIO5",
    "debounceMs": 30,
    // Held this long, a press stops the speaker talking instead of toggling mute.
    "longPressMs": 800
  },
  "mqtt": {
    // The household's broker: approvals go to paired phones, home actions go to devices.
    "url": "mqtts://broker.home.arpa:8883",
    "username": "nocturn-kitchen",
    // The password: NOCTURN_MQTT_PASSWORD(_FILE), the credential "mqtt-password" (the
    // installer's /etc/nocturn/credentials/mqtt-password), or a file of your own:
    // "passwordFile": "/etc/nocturn/mqtt-password",
    "ca": "/etc/nocturn/broker-ca.pem",
    "prefix": "nocturn/v1",
    "deviceId": "kitchen",
    // May the phone that typed a request approve it itself? "non-critical" (critical tools need
    // another phone), "never", or "any".
    "selfApproval": "non-critical",
    // A critical yes needs the phone owner's fingerprint, face or screen lock (WebAuthn, from the
    // app over HTTPS): "if-registered" asks it of every phone that registered one, "always" of
    // every phone (a phone without one may then approve only ordinary tools).
    "ownerCheck": "if-registered",
    // The device in Home Assistant (docs/home-assistant.md): off unless "discovery" is true; the
    // broker's ACL needs the lines that page gives.
    "homeAssistant": { "discovery": false, "name": "Kitchen speaker" }
  },
  // The household phone app (docs/phone-app.md), served from this device; it talks to the broker
  // over WebSocket itself. "port" 8080; HTTPS with both TLS files; "enabled": false turns it off.
  "phoneApp": {
    "enabled": true,
    "port": 8080,
    // The name phones reach this device by, in pairing links (default: the host name + ".local").
    // "publicHost": "kitchen.local",
    // "tlsCertFile": "/etc/nocturn/app-cert.pem", "tlsKeyFile": "/etc/nocturn/app-key.pem",
    // Default: the host of mqtt.url on port 9001 (Mosquitto's WebSocket listener).
    "brokerWsUrl": "wss://broker.home.arpa:9001"
  },
  // Paired phones' keys: shared secrets (256 random bits each, one file per phone, owner-only).
  "phonesDir": "/var/lib/nocturn/phones",
  // Transcripts, grants and timers (StateDirectory=nocturn in the systemd unit).
  "store": { "path": "/var/lib/nocturn/nocturn.db" },
  "session": {
    // A spoken session closes after this many minutes, or this long without speech.
    "budgetMinutes": 10,
    "idleTimeoutSeconds": 20,
    // No phone answer in this time: denied, and the model says so.
    "approvalTimeoutSeconds": 60
  },
  // Conversations older than this, or beyond this many, are deleted (and the file vacuumed).
  "retention": { "days": 90, "keep": 500 },
  "persona": {
    "voice": "Kore",
    "language": "en-GB",
    "timeZone": "Europe/London"
  },
  "tools": {
    // Per tool and channel: allow, ask (a phone must say yes) or deny. Voice defaults to ask.
    "policies": {
      "set_timer": { "voice": "allow" },
      "cancel_timer": { "voice": "allow" }
    },
    // Your own tools: modules exporting a tool or a list of tools (docs/tools.md).
    "modules": []
  },
  // Named actions that publish to a topic on the broker, e.g. through zigbee2mqtt.
  "homeActions": [
    {
      "name": "hall_light_on",
      "description": "Turns the hall light on.",
      "says": "turn the hall light on",
      "topic": "zigbee2mqtt/hall_light/set",
      "payload": { "state": "ON" },
      "policy": { "voice": "allow", "text": "allow" }
    },
    {
      "name": "unlock_front_door",
      "description": "Unlocks the front door.",
      "says": "unlock the front door",
      "topic": "zigbee2mqtt/front_door/set",
      "payload": { "state": "UNLOCK" },
      "qos": 1,
      // Critical: always needs a phone's yes, and no "until" grants.
      "critical": true,
      "policy": { "voice": "ask", "text": "ask" }
    }
  ],
  // How an approval reaches a phone that is not looking at the app (docs/phone-app.md, "When the
  // app is closed"). Web Push needs the app on HTTPS (nocturn tls); its VAPID key is made at the
  // first start beside phonesDir. ntfy and Home Assistant carry a sentence and a link, no
  // authority, and are off unless set.
  "alerts": {
    "webPush": { "enabled": true, "subject": "mailto:household@example.org" },
    // "ntfy": { "server": "https://ntfy.sh", "topic": "kitchen-speaker-q7r2x9", "tokenFile": "/etc/nocturn/ntfy-token" },
    "homeAssistant": false
  },
  "logLevel": "info"
}
`
