#include "argus_authored.h"
SEC("tp_btf/page_fault_user")
int BPF_PROG(on_fault, unsigned long address, struct pt_regs *regs, unsigned long ec)
{
	if (argus_current_is_target())
		argus_account(0, 1, 0);
	return 0;
}
