#include "textflag.h"
#include "funcdata.h"

// func growStack()
TEXT ·growStack(SB), 0, $32768-0
	NO_LOCAL_POINTERS
	RET
