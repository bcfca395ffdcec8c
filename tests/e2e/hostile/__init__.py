"""The hostile-repository attempts of issue 8: a catalogue, the repository they run in, and a
judge that looks only at side effects (files created or changed, a secret in a later API
request), never at how a client words a refusal."""
