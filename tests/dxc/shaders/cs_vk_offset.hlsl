// [[vk::offset(n)]] places a constant-buffer member by hand: b at byte 32, leaving a gap.
struct Params
{
    float4 a;
    [[vk::offset(32)]] float4 b;
};

ConstantBuffer<Params> params : register(b0);
RWStructuredBuffer<float4> results : register(u1);

[numthreads(1, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    results[id.x] = params.a + params.b;
}
