// OpenSSL's libcrypto (Debian's libssl-dev): SHA-256 for the server's stored secrets.
#include <openssl/evp.h>
