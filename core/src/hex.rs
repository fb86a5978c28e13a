//! Lower-case hex text of bytes (session ids, digests), in one allocation.

const DIGITS: &[u8; 16] = b"0123456789abcdef";

/// `bytes` as lower-case hex, two digits a byte.
pub(crate) fn lower_hex(bytes: &[u8]) -> String {
    let mut text = String::with_capacity(bytes.len() * 2);
    for b in bytes {
        text.push(char::from(DIGITS[usize::from(b >> 4)]));
        text.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::lower_hex;

    #[test]
    fn two_lower_case_digits_a_byte() {
        assert_eq!(lower_hex(&[]), "");
        assert_eq!(lower_hex(&[0x00, 0x0f, 0xa5, 0xff]), "000fa5ff");
        let all: Vec<u8> = (0..=255).collect();
        let expected: String = all.iter().map(|b| format!("{b:02x}")).collect();
        assert_eq!(lower_hex(&all), expected);
    }
}
