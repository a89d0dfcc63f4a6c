#define _XOPEN_SOURCE 700
#include <wchar.h>
#include <locale.h>
#include <string.h>
#include <langinfo.h>
#include "cwidth.h"

int synchat_wcwidth(uint32_t scalar) {
    return wcwidth((wchar_t)scalar);
}

static int is_utf8(void) {
    const char *codeset = nl_langinfo(CODESET);
    return codeset && (strcmp(codeset, "UTF-8") == 0 || strcmp(codeset, "utf8") == 0);
}

int synchat_use_utf8_locale(void) {
    setlocale(LC_ALL, "");
    if (is_utf8()) return 1;
    if (setlocale(LC_ALL, "C.UTF-8") && is_utf8()) return 1;
    if (setlocale(LC_ALL, "C.utf8") && is_utf8()) return 1;
    return 0;
}
