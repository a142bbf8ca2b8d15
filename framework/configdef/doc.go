// Package configdef declares, parses and validates connector and worker
// configuration, the way Kafka Connect's ConfigDef does: every key has a
// type, a default (or none, which makes it required), an importance,
// documentation, a group and order for UIs, validators, recommended values
// and dependents.
//
// The same definitions drive three things, so they cannot drift apart:
// parsing at start-up, the per-field answers of
// PUT /connector-plugins/{p}/config/validate, and the generated reference
// docs under docs/.
//
// PASSWORD values are parsed into Secret, whose String and JSON forms are
// "[hidden]"; the clear value is only available through Secret.Value. (The
// type is not called Password because that name is the PASSWORD Type constant.)
//
// What this package must not do: know which keys exist. The framework's
// common connector keys live with the framework, each connector's keys live
// with the connector.
package configdef
