// Typed buffers (texel buffers in Vulkan): Buffer<T> on a t register, RWBuffer<T> on a u register.
Buffer<float4> palette : register(t2);
RWBuffer<uint> histogram : register(u3);

cbuffer Params : register(b1)
{
    uint entries;
    uint3 pad;
};

[numthreads(64, 1, 1)]
void main(uint3 id : SV_DispatchThreadID)
{
    if (id.x < entries)
    {
        float4 c = palette[id.x];
        uint bucket = (uint)(saturate(c.r) * 15.0);
        InterlockedAdd(histogram[bucket], 1);
    }
}
