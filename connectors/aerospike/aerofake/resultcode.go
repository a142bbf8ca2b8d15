package aerofake

import "strconv"

// ResultCode is an Aerospike server result code as carried in byte 13 of an
// AS_MSG reply. The values are the wire values; the names follow the Go client.
type ResultCode uint8

// Result codes the server answers with. Fault injection may use any value.
const (
	OK                   ResultCode = 0
	ServerError          ResultCode = 1
	KeyNotFound          ResultCode = 2
	GenerationError      ResultCode = 3
	ParameterError       ResultCode = 4
	KeyExists            ResultCode = 5
	BinExists            ResultCode = 6
	ServerMemError       ResultCode = 8
	Timeout              ResultCode = 9
	PartitionUnavailable ResultCode = 11
	BinTypeError         ResultCode = 12
	RecordTooBig         ResultCode = 13
	KeyBusy              ResultCode = 14
	UnsupportedFeature   ResultCode = 16
	BinNotFound          ResultCode = 17
	KeyMismatch          ResultCode = 19
	InvalidNamespace     ResultCode = 20
	BinNameTooLong       ResultCode = 21
	FailForbidden        ResultCode = 22
	ElementNotFound      ResultCode = 23
	ElementExists        ResultCode = 24
	EnterpriseOnly       ResultCode = 25
	OpNotApplicable      ResultCode = 26
	FilteredOut          ResultCode = 27
	SecurityNotEnabled   ResultCode = 52
	IndexNotFound        ResultCode = 201
)

var resultCodeNames = map[ResultCode]string{
	OK:                   "OK",
	ServerError:          "SERVER_ERROR",
	KeyNotFound:          "KEY_NOT_FOUND_ERROR",
	GenerationError:      "GENERATION_ERROR",
	ParameterError:       "PARAMETER_ERROR",
	KeyExists:            "KEY_EXISTS_ERROR",
	BinExists:            "BIN_EXISTS_ERROR",
	ServerMemError:       "SERVER_MEM_ERROR",
	Timeout:              "TIMEOUT",
	PartitionUnavailable: "PARTITION_UNAVAILABLE",
	BinTypeError:         "BIN_TYPE_ERROR",
	RecordTooBig:         "RECORD_TOO_BIG",
	KeyBusy:              "KEY_BUSY",
	UnsupportedFeature:   "UNSUPPORTED_FEATURE",
	BinNotFound:          "BIN_NOT_FOUND",
	KeyMismatch:          "KEY_MISMATCH",
	InvalidNamespace:     "INVALID_NAMESPACE",
	BinNameTooLong:       "BIN_NAME_TOO_LONG",
	FailForbidden:        "FAIL_FORBIDDEN",
	ElementNotFound:      "FAIL_ELEMENT_NOT_FOUND",
	ElementExists:        "FAIL_ELEMENT_EXISTS",
	EnterpriseOnly:       "ENTERPRISE_ONLY",
	OpNotApplicable:      "OP_NOT_APPLICABLE",
	FilteredOut:          "FILTERED_OUT",
	SecurityNotEnabled:   "SECURITY_NOT_ENABLED",
	SecurityNotSupported: "SECURITY_NOT_SUPPORTED",
	InvalidCredential:    "INVALID_CREDENTIAL",
	NotAuthenticated:     "NOT_AUTHENTICATED",
	IndexNotFound:        "INDEX_NOTFOUND",
}

func (rc ResultCode) String() string {
	if n, ok := resultCodeNames[rc]; ok {
		return n
	}
	return "RESULT_CODE_" + strconv.Itoa(int(rc))
}
