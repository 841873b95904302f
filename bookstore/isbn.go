package bookstore

import (
	"errors"
	"fmt"
)

// errBadISBN is returned for an ISBN that is not 10 or 13 digits.
var errBadISBN = errors.New("malformed ISBN: want 10 or 13 digits (an ISBN-10 may end in X)")

// parseISBN checks the shape of an ISBN and returns its ISBN-13 form, so
// 0441172717 and 9780441172719 name the same book. Only the shape is checked,
// not the check digit: a well-formed ISBN the store lacks is a 404, not a 400.
func parseISBN(s string) (string, error) {
	switch len(s) {
	case 13:
		if !allDigits(s) {
			return "", errBadISBN
		}
		return s, nil
	case 10:
		last := s[9]
		if !allDigits(s[:9]) || !(isDigit(last) || last == 'X' || last == 'x') {
			return "", errBadISBN
		}
		// An ISBN-10 becomes an ISBN-13 by prefixing 978 and recomputing the
		// check digit; its own check digit plays no part.
		return withCheckDigit("978" + s[:9]), nil
	default:
		return "", errBadISBN
	}
}

// withCheckDigit appends the ISBN-13 check digit to 12 digits: the digits
// are weighted 1,3,1,3,... and the check digit brings the sum to a multiple
// of 10.
func withCheckDigit(twelve string) string {
	sum := 0
	for i := range len(twelve) {
		d := int(twelve[i] - '0')
		if i%2 == 1 {
			d *= 3
		}
		sum += d
	}
	return fmt.Sprintf("%s%d", twelve, (10-sum%10)%10)
}

func allDigits(s string) bool {
	for i := range len(s) {
		if !isDigit(s[i]) {
			return false
		}
	}
	return true
}

func isDigit(b byte) bool { return b >= '0' && b <= '9' }
