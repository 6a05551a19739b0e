//! TLS profiles for IEC 62351-3/-4 over OpenSSL, GnuTLS and rustls; cipher-suite catalogue; PKI generation
