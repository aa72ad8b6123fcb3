// Generates codec_golden.json: what Go's encoding/json does with Hatchet's
// Message (msgqueue.Message, plus published_at). Run with `go run gen.go >
// ../testdata/codec_golden.json`; the C++ tests replay every case.
//
// UUID mirrors github.com/google/uuid's text forms (Parse accepts the
// canonical, urn:uuid:, {braced} and 32-hex forms; String is lowercase).
package main

import (
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"strings"
	"time"
)

type UUID [16]byte

func (u UUID) MarshalText() ([]byte, error) {
	var b [36]byte
	hex.Encode(b[:], u[:4])
	b[8] = '-'
	hex.Encode(b[9:13], u[4:6])
	b[13] = '-'
	hex.Encode(b[14:18], u[6:8])
	b[18] = '-'
	hex.Encode(b[19:23], u[8:10])
	b[23] = '-'
	hex.Encode(b[24:], u[10:])
	return b[:], nil
}

func (u *UUID) UnmarshalText(data []byte) error {
	s := string(data)
	switch len(s) {
	case 36:
	case 45:
		if !strings.EqualFold(s[:9], "urn:uuid:") {
			return errors.New("invalid urn prefix")
		}
		s = s[9:]
	case 38:
		if s[0] != '{' || s[37] != '}' {
			return errors.New("invalid bracketed UUID format")
		}
		s = s[1:37]
	case 32:
		b, err := hex.DecodeString(s)
		if err != nil {
			return err
		}
		copy(u[:], b)
		return nil
	default:
		return errors.New("invalid UUID length")
	}
	if s[8] != '-' || s[13] != '-' || s[18] != '-' || s[23] != '-' {
		return errors.New("invalid UUID format")
	}
	b, err := hex.DecodeString(s[0:8] + s[9:13] + s[14:18] + s[19:23] + s[24:])
	if err != nil {
		return err
	}
	copy(u[:], b)
	return nil
}

type Message struct {
	ID                string            `json:"id"`
	Payloads          [][]byte          `json:"messages"`
	TenantID          UUID              `json:"tenant_id"`
	ImmediatelyExpire bool              `json:"immediately_expire"`
	Persistent        bool              `json:"persistent"`
	OtelCarrier       map[string]string `json:"otel_carrier"`
	Retries           int               `json:"retries"`
	Compressed        bool              `json:"compressed,omitempty"`
	PublishedAt       time.Time         `json:"published_at,omitzero"`
}

type Case struct {
	Name   string `json:"name"`
	Input  string `json:"input"`
	OK     bool   `json:"ok"`
	Output string `json:"output,omitempty"` // Go's re-encoding of the decoded message
}

func mustTenant(s string) UUID {
	var u UUID
	if err := u.UnmarshalText([]byte(s)); err != nil {
		panic(err)
	}
	return u
}

func main() {
	var cases []Case
	add := func(name, input string) {
		var m Message
		err := json.Unmarshal([]byte(input), &m)
		c := Case{Name: name, Input: input, OK: err == nil}
		if err == nil {
			out, err := json.Marshal(&m)
			if err != nil {
				c.OK = false
			} else {
				c.Output = string(out)
			}
		}
		cases = append(cases, c)
	}
	encode := func(name string, m Message) {
		out, err := json.Marshal(&m)
		if err != nil {
			panic(err)
		}
		add(name, string(out))
	}

	tenant := mustTenant("8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d")
	at := time.Date(2026, 11, 30, 10, 0, 0, 123456789, time.UTC)
	encode("zero", Message{})
	encode("task_completed", Message{ID: "task-completed", Payloads: [][]byte{[]byte(`{"task_id":"abc","status":"COMPLETED"}`)}, TenantID: tenant, Retries: 3})
	encode("empty_payloads_not_null", Message{ID: "x", Payloads: [][]byte{}, OtelCarrier: map[string]string{}})
	encode("compressed", Message{ID: "big", Payloads: [][]byte{{0x1f, 0x8b, 0x08, 0, 0, 0, 0, 0, 0, 0xff}}, Compressed: true, Persistent: true, ImmediatelyExpire: true})
	encode("published_at_nanos", Message{ID: "t", PublishedAt: at})
	encode("published_at_millis", Message{ID: "t", PublishedAt: time.Date(2026, 1, 2, 3, 4, 5, 120000000, time.UTC)})
	encode("published_at_offset", Message{ID: "t", PublishedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.FixedZone("x", -(7*3600+30*60)))})
	encode("otel_sorted", Message{ID: "t", OtelCarrier: map[string]string{"traceparent": "00-abc-def-01", "b": "2", "a": "1", "Z": "upper"}})
	encode("html_and_control_escaping", Message{ID: "<a href=\"x\">&amp;</a>\n\t\r\b\f\x00\x1f\x7f\u2028\u2029é😀\\/"})
	encode("invalid_utf8", Message{ID: "bad\xff\xfeutf8\xed\xa0\x80end"})
	encode("payload_lengths", Message{ID: "p", Payloads: [][]byte{{}, {1}, {1, 2}, {1, 2, 3}, {0xff, 0xfe, 0xfd, 0xfc}}})
	encode("negative_retries", Message{ID: "r", Retries: -42})

	add("null_arrays", `{"id":"a","messages":null,"otel_carrier":null,"tenant_id":null,"retries":null,"published_at":null,"compressed":null}`)
	add("unknown_keys_ignored", `{"id":"a","extra":{"deep":[1,2,{"x":null}]},"other":[true,false,"s",-1.5e3],"messages":["YQ=="]}`)
	add("keys_any_case", `{"ID":"a","Messages":["YQ=="],"TENANT_ID":"8F3B1C2D-4E5F-4A6B-8C7D-9E0F1A2B3C4D","Immediately_Expire":true,"PERSISTENT":true,"Otel_Carrier":{"k":"v"},"RETRIES":7,"Compressed":true,"Published_At":"2026-11-30T10:00:00Z"}`)
	add("kelvin_and_long_s_fold", "{\"me\u017f\u017fages\":[\"YQ==\"],\"id\":\"k\"}")
	add("duplicate_keys_last_wins", `{"id":"first","ID":"second","id":"third"}`)
	add("whitespace", " \n\t{ \"id\" : \"a\" , \"messages\" : [ \"YQ==\" , \"Yg==\" ] }\r\n ")
	add("escapes_in_strings", `{"id":"\u00e9\ud83d\ude00\u003c\/\"\\\b\f\n\r\t","otel_carrier":{"\u0041":"\ud800"}}`)
	add("tenant_forms_urn", `{"tenant_id":"urn:uuid:8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"}`)
	add("tenant_forms_braced", `{"tenant_id":"{8f3b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d}"}`)
	add("tenant_forms_hex", `{"tenant_id":"8f3b1c2d4e5f4a6b8c7d9e0f1a2b3c4d"}`)
	add("published_at_offset_roundtrip", `{"published_at":"2026-01-02T03:04:05.5-07:30"}`)
	add("published_at_trailing_zero_frac", `{"published_at":"2026-01-02T03:04:05.100000000Z"}`)
	add("published_at_many_digits", `{"published_at":"2026-01-02T03:04:05.1234567891234Z"}`)
	add("published_at_zero_time", `{"published_at":"0001-01-01T00:00:00Z"}`)
	add("base64_with_newlines", `{"messages":["YWJj\nZGVm"]}`)
	add("large_retries", `{"retries":9223372036854775807}`)
	add("empty_object", `{}`)
	add("null_document", `null`)

	// Malformed: Go refuses these.
	add("bad_not_object", `[1,2]`)
	add("bad_truncated", `{"id":"a"`)
	add("bad_trailing_garbage", `{"id":"a"} x`)
	add("bad_base64", `{"messages":["not base64!"]}`)
	add("bad_base64_padding", `{"messages":["YQ="]}`)
	add("bad_retries_float", `{"retries":1.5}`)
	add("bad_retries_overflow", `{"retries":9223372036854775808}`)
	add("bad_retries_string", `{"retries":"3"}`)
	add("bad_tenant", `{"tenant_id":"not-a-uuid"}`)
	add("bad_tenant_empty", `{"tenant_id":""}`)
	add("bad_bool", `{"persistent":"yes"}`)
	add("bad_messages_type", `{"messages":"YQ=="}`)
	add("bad_messages_element", `{"messages":[1]}`)
	add("bad_otel_value", `{"otel_carrier":{"a":1}}`)
	add("bad_published_at", `{"published_at":"2026-13-01T00:00:00Z"}`)
	add("bad_published_at_no_zone", `{"published_at":"2026-01-01T00:00:00"}`)
	add("bad_control_char", "{\"id\":\"a\x01b\"}")
	add("bad_escape", `{"id":"\x"}`)
	add("bad_leading_zero", `{"retries":01}`)
	add("bad_empty", ``)
	add("bad_single_quote", `{'id':'a'}`)
	add("bad_trailing_comma", `{"id":"a",}`)

	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(cases); err != nil {
		panic(err)
	}
}
