"""The built-in LQ and linear-mixture agents behind the plug-in step protocols
(``dprl.agents.plugin``): what a researcher wrapping their own agent writes, used by the
runner tests, the plug-in settings test and the benchmarks."""

from __future__ import annotations


class StepOFU:
    """OFU-RL / Private-OFU-RL (``OFUAgent``) behind the LQ step protocol."""

    def __init__(self, agent):
        self.agent = agent

    def policy(self):
        return self.agent.act().gains  # lines 3-5 of Algorithm 1

    def observe(self, states, controls):
        self.agent.observe(states, controls)  # line 9

    @property
    def regularizer(self):
        """The counters it releases through (what accounting and ``lq_audit`` read)."""
        return self.agent.regularizer


class StepLinOpt:
    """A LinOpt agent (VI or PO) behind the linear-mixture step protocol."""

    def __init__(self, agent):
        self.agent = agent

    def policy(self):
        self.agent.begin_episode()
        return self.agent.act_policy()

    def observe(self, states, actions, rewards):
        self.agent.end_episode(states, actions, rewards)

    @property
    def reg_p(self):
        """The Privatizer's regularizers it releases through (accounting, ``linmix_audit``)."""
        return self.agent.reg_p

    @property
    def reg_r(self):
        return self.agent.reg_r
