package k6script

import (
	"github.com/dop251/goja"
	"golang.org/x/crypto/ocsp"
)

// k6/http's constants for res.tls_version and res.ocsp, k6's names and
// strings.
var httpConstants = [][2]string{
	{"TLS_1_0", "tls1.0"}, {"TLS_1_1", "tls1.1"}, {"TLS_1_2", "tls1.2"}, {"TLS_1_3", "tls1.3"},
	{"OCSP_STATUS_GOOD", "good"}, {"OCSP_STATUS_REVOKED", "revoked"},
	{"OCSP_STATUS_SERVER_FAILED", "server_failed"}, {"OCSP_STATUS_UNKNOWN", "unknown"},
	{"OCSP_REASON_UNSPECIFIED", "unspecified"}, {"OCSP_REASON_KEY_COMPROMISE", "key_compromise"},
	{"OCSP_REASON_CA_COMPROMISE", "ca_compromise"}, {"OCSP_REASON_AFFILIATION_CHANGED", "affiliation_changed"},
	{"OCSP_REASON_SUPERSEDED", "superseded"}, {"OCSP_REASON_CESSATION_OF_OPERATION", "cessation_of_operation"},
	{"OCSP_REASON_CERTIFICATE_HOLD", "certificate_hold"}, {"OCSP_REASON_REMOVE_FROM_CRL", "remove_from_crl"},
	{"OCSP_REASON_PRIVILEGE_WITHDRAWN", "privilege_withdrawn"}, {"OCSP_REASON_AA_COMPROMISE", "aa_compromise"},
}

// ocspStatuses and ocspReasons name x/crypto/ocsp's codes as k6 does.
var (
	ocspStatuses = map[int]string{ocsp.Good: "good", ocsp.Revoked: "revoked", ocsp.ServerFailed: "server_failed", ocsp.Unknown: "unknown"}
	ocspReasons  = map[int]string{
		ocsp.Unspecified: "unspecified", ocsp.KeyCompromise: "key_compromise", ocsp.CACompromise: "ca_compromise",
		ocsp.AffiliationChanged: "affiliation_changed", ocsp.Superseded: "superseded",
		ocsp.CessationOfOperation: "cessation_of_operation", ocsp.CertificateHold: "certificate_hold",
		ocsp.RemoveFromCRL: "remove_from_crl", ocsp.PrivilegeWithdrawn: "privilege_withdrawn", ocsp.AACompromise: "aa_compromise",
	}
)

// ocspInfo is res.ocsp as k6 v1.x fills it (lib/netext ParseTLSConnState):
// the stapled response read without checking its signature (no issuer
// given), times in Unix seconds, an absent one (a zero time) as Go's zero
// time in seconds, -62135596800, and the reason named whatever the status
// (a good response's is "unspecified"). Over TLS without a staple (or one
// that does not parse) only the status is set, "unknown"; over plain
// http:// every field is empty.
type ocspInfo struct {
	producedAt, thisUpdate, nextUpdate, revokedAt int64
	reason, status                                string
}

func parseOCSP(tlsVersion uint16, staple []byte) ocspInfo {
	if tlsVersion == 0 {
		return ocspInfo{}
	}
	o := ocspInfo{status: "unknown"}
	res, err := ocsp.ParseResponse(staple, nil)
	if err != nil {
		return o
	}
	o.status = ocspStatuses[res.Status]
	o.reason = ocspReasons[res.RevocationReason]
	o.producedAt, o.thisUpdate = res.ProducedAt.Unix(), res.ThisUpdate.Unix()
	o.nextUpdate, o.revokedAt = res.NextUpdate.Unix(), res.RevokedAt.Unix()
	return o
}

// ocsp is res.ocsp, its keys in k6's order.
func (r *responseObject) ocsp() goja.Value {
	o := parseOCSP(r.rep.TLSVersion, r.rep.OCSP)
	obj := r.v.rt.NewObject()
	must(obj.Set("produced_at", o.producedAt))
	must(obj.Set("this_update", o.thisUpdate))
	must(obj.Set("next_update", o.nextUpdate))
	must(obj.Set("revoked_at", o.revokedAt))
	must(obj.Set("revocation_reason", o.reason))
	must(obj.Set("status", o.status))
	return obj
}
